import sys
def leaf(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s
def mid(n):
    d = {}
    for i in range(n // 10):
        d[str(i)] = i
    return leaf(n) + len(d)
def top():
    t = 0
    for r in range(30):
        t += mid(20000)
    return t
print(top())
