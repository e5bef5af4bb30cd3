#!/usr/bin/python3
"""How long Cairn's GUI thread takes to answer, measured from outside under X11.

Sends the window manager's _NET_WM_PING to the first mapped window whose
WM_CLASS contains CLASS every PERIOD ms and times each reply: Qt answers it
from its GUI thread, so a reply late by N ms is an event loop blocked for N ms
(clicks and scrolling would wait as long). Needs an X server without a window
manager (e.g. `Xvfb :99`) and Debian's python3-xlib.

    DISPLAY=:99 /usr/bin/python3 tools/ui-latency.py cairn 100 50 &
    DISPLAY=:99 build/bin/cairn --data-dir /tmp/d --model M.gguf --prompt "$(cat long.txt)"

prints one line a second (pings answered, worst and median ms) and the worst."""
import sys, time, statistics
from Xlib import X, display, protocol
cls_name, secs = sys.argv[1], float(sys.argv[2])
period = float(sys.argv[3]) / 1000 if len(sys.argv) > 3 else 0.05
d = display.Display(); root = d.screen().root
WM_PROTOCOLS, PING = d.intern_atom('WM_PROTOCOLS'), d.intern_atom('_NET_WM_PING')
def find(w):
    try:
        cls = w.get_wm_class() or ()
        if cls_name in cls and w.get_geometry().width > 100 and w.get_attributes().map_state == X.IsViewable: return w
    except Exception: pass
    for c in w.query_tree().children:
        r = find(c)
        if r: return r
win = None
t0 = time.time()
while not win and time.time() - t0 < 60:
    win = find(root); time.sleep(0.2)
if not win: sys.exit("window not found")
root.change_attributes(event_mask=X.SubstructureRedirectMask | X.StructureNotifyMask)
end = time.time() + secs; seq = 0; bucket = []; bucket_start = time.time(); worst = 0
while time.time() < end:
    seq += 1
    ev = protocol.event.ClientMessage(window=win, client_type=WM_PROTOCOLS, data=(32, [PING, seq, win.id, 0, 0]))
    sent = time.time(); win.send_event(ev, event_mask=0); d.flush()
    got = None
    while got is None and time.time() - sent < 10:
        while d.pending_events():
            e = d.next_event()
            if e.type == X.ClientMessage and e.data[1][0] == PING and e.data[1][1] == seq: got = time.time()
        if got is None: time.sleep(0.001)
    ms = ((got or time.time()) - sent) * 1000; bucket.append(ms); worst = max(worst, ms)
    if time.time() - bucket_start >= 1:
        print(f"{time.strftime('%H:%M:%S')} pings {len(bucket)} max {max(bucket):.1f} ms median {statistics.median(bucket):.1f} ms", flush=True)
        bucket = []; bucket_start = time.time()
    time.sleep(max(0, period - (time.time() - sent)))
print(f"worst {worst:.1f} ms")
