from __future__ import annotations

from typing import Iterable

from ctxlint.profiles import refused_split_responses, split_responses_sent
from ctxlint.rules.base import Rule, Violation


class RefusedSplitResponses(Rule):
    """
    ## What it does
    Flags a Gemini API body (`contents`) that answers a model turn of parallel function
    calls with responses spread over more than one content (one user content per tool
    result, as an app that turns each tool message into a content of its own sends them),
    where the log shows the request went to a host that refuses it: Vertex AI
    (`aiplatform.googleapis.com`, regional hosts too), as the URL an HTTP logger, a cassette
    or the envelope's `url` names. The Gemini API's own endpoint
    (`generativelanguage.googleapis.com`) takes such a body, so a request whose host the
    log does not name is not judged. The model profiles' data says which host refuses what,
    with its sources. Judged where the request names the model as its maker's API does and
    no successful reply to it is logged; a split a host took in a request it answered
    earlier in the session is left alone. Reported once, where it starts: the turns one
    request sends split are one finding (one refusal), and a turn is not reported again in
    the requests after it. A response missing altogether is CTX002's.

    ## Why is this bad?
    Gemini pairs a turn's calls with the `functionResponse` parts of the one content right
    after it. Vertex AI answers 400 ("Please ensure that the number of function response
    parts is equal to the number of function call parts of the function call turn.")
    before the model sees anything, and the turn stays in the history: every later request
    of the session fails the same way, and the session cannot recover. It shows only when
    the model makes two or more calls at once, so short tests pass; a session that falls
    back to Gemini after another model made parallel calls hits it at once.

    ## Example
    ```json
    {"contents": [
      {"role": "user", "parts": [{"text": "Weather in Paris and Rome?"}]},
      {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {"city": "Paris"}}},
                                  {"functionCall": {"name": "weather", "args": {"city": "Rome"}}}]},
      {"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": {"temp": 12}}}]},
      {"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": {"temp": 18}}}]}]}
    ```

    Use instead: one content with both responses:
    ```json
    {"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": {"temp": 12}}},
                               {"functionResponse": {"name": "weather", "response": {"temp": 18}}}]}
    ```
    """

    code = "CTX049"
    name = "refused-split-responses"
    severity = "error"
    remediation = "Send every functionResponse part that answers a model turn's calls in the one content right after it: merge consecutive tool results into one user content."

    def check(self, ctx) -> Iterable[Violation]:
        record = ctx.turn.record
        entry = refused_split_responses(record)
        if entry is None:
            return
        # the host answered the same split before: taken
        splits = [(split, sent) for split in record.source_map.split_responses if not ctx.host_took(sent := split_responses_sent(record, split))]
        if not splits:
            return
        (first, key), others = splits[0], splits[1:]
        # one request, one refusal: an app that splits one turn's responses splits every turn's
        also = "".join(f" (and the calls of assistant message {ctx.label(split.calls_at)} over contents {_listed(split.contents)})" for split, _ in others)
        yield Violation(
            f"the {first.calls} calls of assistant message {ctx.label(first.calls_at)} are answered over contents {_listed(first.contents)}, "
            f"the first holding {first.first_content} of the responses{also}: {entry['by']} answers {entry['status']} "
            f"({entry['error']!r}); {entry['takes_it']} takes it",
            key=key, covers=tuple(sent for _, sent in others), message_index=first.split_at, pointer=f"/messages/{first.split_at}",
            evidence={"calls": first.calls, "contents": list(first.contents), "first_content": first.first_content,
                      "also": [list(split.contents) for split, _ in others], "host": record.host, "model": record.model,
                      "provider_error": entry["error"], "sources": entry["sources"]},
        )


def _listed(contents: tuple[int, ...]) -> str:
    return ", ".join(map(str, contents[:-1])) + f" and {contents[-1]}"
