"""Load runs for the reliability issue: a log of 1,000,000 small records, one session of
5,000 turns (history trimmed to the last 40 messages, as long-running agents do), and a log
without session keys of 6,000 chats that open with "Hi" and end alike, 300 at a time (what
keyless grouping must tie in time that grows with the log, not its square). Prints the wall
time, peak RSS and exit code of `ctxlint check` on each.

    python bench/load.py [greeted-chats.jsonl ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from run import measure

HERE = Path(__file__).resolve().parent


def million_records(path: Path, count: int = 1_000_000) -> None:
    with path.open("wb") as out:
        for n in range(count):
            session = f"s{n // 4}"
            turn = n % 4
            messages = [{"role": "user", "content": f"question {k} of {session}"} if k % 2 == 0 else {"role": "assistant", "content": f"answer {k}"}
                        for k in range(2 * turn + 1)]
            out.write(orjson.dumps({"session_id": session, "request": {"model": "gpt-4o", "messages": messages},
                                    "response": {"choices": [{"message": {"role": "assistant", "content": f"answer {2 * turn + 1}"}, "finish_reason": "stop"}],
                                                 "usage": {"prompt_tokens": 20 + turn * 10}}}) + b"\n")


def long_session(path: Path, turns: int = 5000, keep: int = 40) -> None:
    history = [{"role": "system", "content": "You are a log analyst. Answer in English."}]
    with path.open("wb") as out:
        for n in range(turns):
            history.append({"role": "user", "content": f"step {n}: summarize chunk {n} of the incident"})
            sent = history[:1] + history[1:][-keep:]  # keeps the system prompt, trims the oldest turns
            out.write(orjson.dumps({"session_id": "agent-1", "request": {"model": "glm-4.6", "messages": sent},
                                    "response": {"choices": [{"message": {"role": "assistant", "content": f"chunk {n}: nothing unusual"}, "finish_reason": "stop"}],
                                                 "usage": {"prompt_tokens": 900}}}) + b"\n")
            history.append({"role": "assistant", "content": f"chunk {n}: nothing unusual"})


def greeted_chats(path: Path, chats: int = 6000, open_at_once: int = 300) -> None:
    prompt = {"role": "system", "content": "You are Acme's support assistant."}
    opening, hello = {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! How can I help?"}

    def requests(n: int) -> list[list[dict]]:
        question = {"role": "user", "content": f"My order number {n} has not arrived yet, can you check it?"}
        answer = {"role": "assistant", "content": f"Order {n} ships tomorrow."}
        return [[prompt, opening], [prompt, opening, hello, question],
                [prompt, opening, hello, question, answer, {"role": "user", "content": "Thanks, and can I change the address?"}]]
    waiting = {n: requests(n) for n in range(open_at_once)}
    started = open_at_once
    with path.open("wb") as out:
        while waiting:
            n = next(iter(waiting))
            left = waiting.pop(n)
            out.write(orjson.dumps({"model": "gpt-4o", "messages": left.pop(0)}) + b"\n")
            if left:
                waiting[n] = left  # to the back: the open chats take turns
            elif started < chats:
                waiting[started] = requests(started)
                started += 1


def main() -> None:
    data = HERE / "out"
    data.mkdir(exist_ok=True)
    ctxlint = [sys.executable, "-c", "from ctxlint.cli import main; main()", "check", "--format", "json", "--exit-zero"]
    runs = (("1M-records.jsonl", million_records), ("5000-turns.jsonl", long_session), ("greeted-chats.jsonl", greeted_chats))
    chosen = sys.argv[1:]  # names of the runs to make, or all
    for name, build in runs:
        if chosen and name not in chosen:
            continue
        log = data / name
        if not log.exists():
            build(log)
        seconds, rss, code = measure([*ctxlint, str(log)])
        print(f"{name}: {log.stat().st_size / 1e6:,.0f} MB, {seconds:.1f} s, peak RSS {rss} MB, exit {code}")


if __name__ == "__main__":
    main()
