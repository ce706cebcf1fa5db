"""pywork.py - a CPU-bound Python program for scripts/bench/analyzer: JSON,
regular expressions, sorting, string building; about 5 s of CPU."""
import json, re, random, collections
def work(n):
    rnd = random.Random(1)
    acc = collections.Counter()
    for i in range(n):
        s = json.dumps({"k": [rnd.random() for _ in range(20)], "i": i})
        d = json.loads(s)
        acc[len(re.findall(r"[0-9]+", s)) % 7] += sum(sorted(d["k"]))
        acc["x"] += len("".join(str(x) for x in range(30)).split("1"))
    return acc
print(len(work(60000)))
