"""Write a realistic request log of a given size for the benchmark.

Thousands of interleaved sessions of 2-40 requests, each request re-sending the whole
history (as agents do), tool loops with parallel calls, reasoning content, English and
CJK text, envelope records with responses and bare request bodies, and a few percent of
planted defects (dropped reasoning, two user messages in a row, a dropped assistant turn,
an orphan tool result). Deterministic for a given seed.

    python bench/generate.py --size 100MB --out bench/out/100MB.jsonl
"""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

import orjson

MODELS = ["deepseek-reasoner", "glm-4.6", "kimi-k2-thinking", "gpt-4o", "doubao-seed-1-6-32k", "qwen3-235b-a22b"]
ENGLISH = ("the flight from Paris lands at nine and the hotel near the station has two rooms left for the weekend "
           "please compare prices and keep the budget under three hundred euros including taxes and breakfast").split()
CJK = list("我们需要查询明天从北京到上海的航班并且预订一家靠近会议中心的酒店预算不超过两千元请比较价格")
TOOLS = [{"type": "function", "function": {"name": name, "description": f"{name} tool",
                                           "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["query"]}}}
         for name in ("search_flights", "search_hotels", "get_weather", "book")]
DEFECTS = ("drop_reasoning", "two_users", "drop_assistant", "orphan_result")


def parse_size(text: str) -> int:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMG]?)B?", text.strip().upper())
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (say 10MB, 1GB)")
    return int(float(match.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[match.group(2)])


class Session:
    def __init__(self, rng: random.Random, number: int, defect_rate: float = 0.04) -> None:
        self.rng = rng
        self.id = f"sess-{number:07d}"
        self.model = rng.choice(MODELS)
        self.turns_left = rng.randint(2, 40)
        self.bare = rng.random() < 0.2  # bare request bodies: no key, no response; sessions are inferred
        self.defect = rng.choice(DEFECTS) if rng.random() < defect_rate else None
        self.defect_at = rng.randint(2, max(2, self.turns_left))
        self.turn = 0
        self.calls = 0
        self.showing: tuple[str, bool] | None = None  # (defect, on a tool-call turn) the next record carries
        self.history = [{"role": "system", "content": f"You are a travel agent for {self.id}. " + self.text(30)},
                        {"role": "user", "content": self.text(25)}]

    def text(self, words: int) -> str:
        if self.rng.random() < 0.3:
            return "".join(self.rng.choice(CJK) for _ in range(words * 2))
        return " ".join(self.rng.choice(ENGLISH) for _ in range(words))

    def response(self) -> dict:
        """The assistant message this turn returns: a parallel tool call or a text answer."""
        reasoning = self.text(self.rng.randint(10, 60)) if self.model != "gpt-4o" else None
        if self.turns_left > 1 and self.rng.random() < 0.6:
            calls = []
            for _ in range(self.rng.randint(1, 3)):
                self.calls += 1
                arguments = orjson.dumps({"query": self.text(4), "limit": self.rng.randint(1, 9)}).decode()
                calls.append({"id": f"call_{self.id}_{self.calls}", "type": "function",
                              "function": {"name": self.rng.choice(TOOLS)["function"]["name"], "arguments": arguments}})
            message = {"role": "assistant", "content": "", "tool_calls": calls}
        else:
            message = {"role": "assistant", "content": self.text(self.rng.randint(15, 80))}
        if reasoning:
            message["reasoning_content"] = reasoning
        return message

    def record(self) -> tuple[bytes, tuple[str, bool] | None]:
        """The next log line, and the planted defect it carries first, if any."""
        showing, self.showing = self.showing, None
        self.turn += 1
        self.turns_left -= 1
        request = {"model": self.model, "messages": list(self.history), "tools": TOOLS}
        reply = self.response()
        prompt_tokens = sum(len(str(m.get("content") or "")) for m in self.history) // 3
        finish = "tool_calls" if reply.get("tool_calls") else "stop"
        if self.bare:
            line = request
        else:
            line = {"session_id": self.id, "timestamp": None, "request": request,
                    "response": {"id": f"r-{self.id}-{self.turn}", "object": "chat.completion", "model": self.model,
                                 "choices": [{"index": 0, "message": reply, "finish_reason": finish}],
                                 "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 50, "total_tokens": prompt_tokens + 50}}}
            del line["timestamp"]
        self.advance(reply)
        return orjson.dumps(line) + b"\n", showing

    def advance(self, reply: dict) -> None:
        """The history the app sends next, with this session's planted defect at its turn."""
        planted = self.defect if self.turn + 1 == self.defect_at else None
        kept = dict(reply)
        if planted == "drop_reasoning" and kept.pop("reasoning_content", None) is not None:
            self.showing = (planted, bool(reply.get("tool_calls")))
        if planted in ("drop_assistant", "orphan_result") or (planted == "two_users" and not reply.get("tool_calls")):
            self.showing = (planted, bool(reply.get("tool_calls")))
        if planted != "drop_assistant":
            self.history.append(kept)
        for call in reply.get("tool_calls", []):
            self.history.append({"role": "tool", "tool_call_id": call["id"], "content": orjson.dumps({"results": [self.text(12) for _ in range(3)]}).decode()})
        if planted == "orphan_result":
            self.history.append({"role": "tool", "tool_call_id": f"call_{self.id}_ghost", "content": "{}"})
        if not reply.get("tool_calls"):
            self.history.append({"role": "user", "content": self.text(self.rng.randint(5, 30))})
            if planted == "two_users":
                self.history.append({"role": "user", "content": self.text(8)})


def generate(size: int, out: Path, seed: int = 7, concurrent: int = 300, planted: list | None = None,
             defect_rate: float = 0.04) -> int:
    """Write the log; `planted` (if given) receives (line, session id, model, defect, on a
    tool-call turn) for every line where a planted defect first shows; `defect_rate` is
    the share of sessions that get one."""
    rng = random.Random(seed)
    open_sessions = [Session(rng, n, defect_rate) for n in range(concurrent)]
    started = concurrent
    written = records = 0
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as handle:
        while written < size:
            index = rng.randrange(len(open_sessions))
            session = open_sessions[index]
            line, showing = session.record()
            handle.write(line)
            written += len(line)
            records += 1
            if showing is not None and planted is not None:
                planted.append((records, session.id, session.model, *showing))
            if session.turns_left <= 0:
                open_sessions[index] = Session(rng, started, defect_rate)
                started += 1
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=parse_size, required=True, help="10MB, 100MB, 1GB")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--concurrent", type=int, default=300, help="sessions open at once (interleaved)")
    args = parser.parse_args()
    records = generate(args.size, args.out, args.seed, args.concurrent)
    print(f"wrote {args.out}: {args.out.stat().st_size:,} bytes, {records:,} records")


if __name__ == "__main__":
    main()
