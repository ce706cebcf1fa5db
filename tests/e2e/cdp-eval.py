#!/usr/bin/env python3
"""cdp-eval.py URL EXPR PROFILE_DIR: load URL in headless Chromium in a
1200x400 window, driven through the DevTools protocol on a pipe (fds 3 and
4, messages of JSON ended by a NUL), wait for the document to load and its
scripts to run, and print the value of the JavaScript expression EXPR as
JSON: what a page shows once it has opened, which a screenshot of a
scrolled page does not reliably show."""
import json, os, subprocess, sys, time

url, expr = sys.argv[1], sys.argv[2]
r_chrome, w_ours = os.pipe()
r_ours, w_chrome = os.pipe()
os.set_inheritable(r_chrome, True); os.set_inheritable(w_chrome, True)
def child():
    os.dup2(r_chrome, 3); os.dup2(w_chrome, 4)
proc = subprocess.Popen(['chromium', '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
                         '--remote-debugging-pipe', '--window-size=1200,400',
                         '--user-data-dir=' + sys.argv[3], 'about:blank'],
                        preexec_fn=child, close_fds=False,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
os.close(r_chrome); os.close(w_chrome)
buf = b''
def send(i, method, params, session=None):
    m = {'id': i, 'method': method, 'params': params}
    if session: m['sessionId'] = session
    os.write(w_ours, json.dumps(m).encode() + b'\0')
def reply(i):
    global buf
    while True:
        while b'\0' in buf:
            msg, buf = buf.split(b'\0', 1)
            m = json.loads(msg)
            if m.get('id') == i:
                if 'error' in m: raise SystemExit('chromium: %s' % m['error'])
                return m['result']
        data = os.read(r_ours, 1 << 20)
        if not data: raise SystemExit('chromium closed the pipe')
        buf += data
try:
    send(1, 'Target.createTarget', {'url': url})
    tid = reply(1)['targetId']
    send(2, 'Target.attachToTarget', {'targetId': tid, 'flatten': True})
    sid = reply(2)['sessionId']
    # the new page starts as about:blank: wait for the document asked for
    ready = "location.href === %s && document.readyState === 'complete'" % json.dumps(url)
    for k in range(300):
        send(10 + k, 'Runtime.evaluate', {'expression': ready, 'returnByValue': True}, sid)
        if reply(10 + k)['result'].get('value') is True: break
        time.sleep(0.1)
    else:
        raise SystemExit('%s did not load in 30 s' % url)
    time.sleep(0.5)
    send(1000, 'Runtime.evaluate', {'expression': expr, 'returnByValue': True}, sid)
    print(json.dumps(reply(1000)['result'].get('value')))
finally:
    proc.kill(); proc.wait()
