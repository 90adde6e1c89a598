"""What the console's Python tests run against: a backend that serves the web console
and can move a device, so the browser scenario and the metrics check are written once.

`FixtureBackend` starts `geotify-console-fixture` (the console over an in-memory
stand-in for the bridge) and moves devices by posting OwnTracks HTTP-mode positions to
`/pub`. A backend for the real bridge provides the same members (`url`, `fences_path`,
`move`, `unname`, `stop`, plus `credentials`), starting mosquitto and `geotify run`
with an `http` section and moving devices by publishing to `owntracks/<user>/<device>`.
Both forget a device the fence file stops naming, read again on SIGHUP (`unname`).
"""

import base64
import json
import os
import shutil
import signal
import subprocess
import tempfile
import urllib.request

# Debian installs mosquitto in /usr/sbin, which is not on an ordinary user's PATH.
MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"

# bcrypt of "s3cret" at cost 5 (htpasswd -nbB -C 5 alice s3cret).
PASSWORD = "s3cret"
HASH = "$2y$05$jKatOKD8jNmQpD8fiHOkJuB7w8EYgxGGPqGi88HMdtTpszAJE9QCS"

FENCES = {
    "devices": {
        "alice/phone": [
            {"identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100,
             "note": "Welcome home", "eventType": "onEntryAndExit"},
            {"identifier": "park", "note": "In the park", "eventType": "onEntry",
             "polygon": [[[13.395, 52.514], [13.401, 52.514], [13.401, 52.518], [13.395, 52.518]],
                         [[13.397, 52.515], [13.399, 52.515], [13.399, 52.517], [13.397, 52.517]]]},
        ]
    },
    "shared": [
        {"identifier": "office", "latitude": 52.5163, "longitude": 13.4100, "radius": 150,
         "note": "At the office", "eventType": "onEntryAndExit"},
        {"identifier": "dateline", "note": "Across the date line", "eventType": "onExit",
         "polygon": [[179.5, -17], [-179.5, -17], [-179.5, -16], [179.5, -16]]},
    ],
}


class FixtureBackend:
    """The console over the fixture bridge, with logins (alice may manage and post her
    own positions, alice-phone is a tracker, prometheus may scrape) and map tiles from an address that answers
    nothing, so the page must work without tiles."""

    def prepare(self, prefix, fences):
        """A fresh directory with the fence file and the users' file of the logins."""
        self.directory = tempfile.mkdtemp(prefix=prefix)
        self.fences_path = os.path.join(self.directory, "fences.json")
        with open(self.fences_path, "w") as file:
            json.dump(fences, file)
        with open(os.path.join(self.directory, "users"), "w") as file:
            for user in ("alice", "alice-phone", "prometheus"):
                file.write(f"{user}:{HASH}\n")

    def __init__(self, binary, fences=FENCES):
        self.prepare("geotify-browser-", fences)
        settings = {"http": {
            "listen": "127.0.0.1:0", "users": "users",
            "roles": {"alice": ["manage", "tracker"], "alice-phone": ["tracker"], "prometheus": ["metrics"]},
            "tiles": "http://127.0.0.1:9/{z}/{x}/{y}.png", "tileAttribution": "no tiles in tests",
        }}
        settings_path = os.path.join(self.directory, "geotify.json")
        with open(settings_path, "w") as file:
            json.dump(settings, file)
        self.log = open(os.path.join(self.directory, "fixture.log"), "w")
        self.process = subprocess.Popen(
            [binary, "--fences", self.fences_path, "--settings", settings_path],
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.process.stdout.readline().strip()
        if not line.startswith("listening "):
            self.stop()
            raise RuntimeError(f"the fixture did not start: {line!r}")
        self.url = line.split(" ", 1)[1] + "/"
        self.credentials = {"username": "alice", "password": PASSWORD}

    def request(self, method, path, body=None, user="alice", headers=None):
        """Sends one request; returns (status, body bytes)."""
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        request = urllib.request.Request(self.url + path, data=data, method=method)
        token = base64.b64encode(f"{user}:{PASSWORD}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
        if body is not None:
            request.add_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def move(self, device, latitude, longitude, tst):
        """Reports a fix for `device` (user/device) as its OwnTracks app would in HTTP mode."""
        user, name = device.split("/", 1)
        status, body = self.request(
            "POST", "pub", {"_type": "location", "lat": latitude, "lon": longitude, "acc": 8, "tst": tst},
            user=user, headers={"X-Limit-U": user, "X-Limit-D": name})
        if status != 200:
            raise RuntimeError(f"/pub answered {status}: {body!r}")

    def unname(self, device):
        """Takes `device` out of the fence file (written whole, then renamed into place,
        as an editor saves it) and has the file read again (SIGHUP): the backend forgets
        the device."""
        with open(self.fences_path) as file:
            fences = json.load(file)
        del fences["devices"][device]
        for members in fences.get("groups", {}).values():
            if device in members:
                members.remove(device)
        written = self.fences_path + ".new"
        with open(written, "w") as file:
            json.dump(fences, file)
        os.replace(written, self.fences_path)
        self.process.send_signal(signal.SIGHUP)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.log.close()
        shutil.rmtree(self.directory, ignore_errors=True)


class BridgeBackend(FixtureBackend):
    """The console of a real `geotify run` over a real mosquitto: the same logins, fences
    and unreachable tiles as the fixture, devices moved by publishing their OwnTracks
    positions to the broker, as phones do. Fix times may be old (the scenarios use fixed
    ones), so the bridge's maximumAge is off."""

    def __init__(self, binary, fences=FENCES):
        import socket
        import threading
        import time
        import paho.mqtt.client as mqtt
        self.prepare("geotify-bridge-browser-", fences)
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        with open(os.path.join(self.directory, "mosquitto.conf"), "w") as file:
            file.write(f"listener {self.port} 127.0.0.1\nallow_anonymous true\n")
        self.broker = subprocess.Popen([MOSQUITTO, "-c", os.path.join(self.directory, "mosquitto.conf")],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        settings = {
            "broker": f"mqtt://127.0.0.1:{self.port}", "fences": "fences.json", "stateDir": "state",
            "maximumAge": 0, "homeassistant": {"enabled": False}, "statsInterval": 0,
            "http": {
                "listen": "127.0.0.1:0", "users": "users",
                "roles": {"alice": ["manage", "tracker"], "alice-phone": ["tracker"], "prometheus": ["metrics"]},
                "tiles": "http://127.0.0.1:9/{z}/{x}/{y}.png", "tileAttribution": "no tiles in tests",
            },
        }
        settings_path = os.path.join(self.directory, "geotify.json")
        with open(settings_path, "w") as file:
            json.dump(settings, file)
        self.log_path = os.path.join(self.directory, "bridge.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen([binary, "run", "--config", settings_path], stdout=self.log, stderr=self.log)
        self.url = None
        deadline = time.time() + 60
        while time.time() < deadline and self.url is None and self.process.poll() is None:
            with open(self.log_path) as log:
                for line in log:
                    if "http: serving the map on " in line:
                        self.url = line.split("serving the map on ", 1)[1].split()[0]
            if self.url is None:
                time.sleep(0.05)
        if self.url is None:
            self.stop()
            raise RuntimeError("the bridge did not start its web console")
        self.credentials = {"username": "alice", "password": PASSWORD}
        # The console serves before the bridge has subscribed: a fix published then
        # would reach no one. The bridge subscribes before it publishes its retained
        # `online`, and the broker keeps a client's order, so once `online` is seen the
        # bridge receives what is published next.
        online = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"browser-test-{os.getpid()}")
        self.client.on_connect = lambda client, *_: client.subscribe("geotify/status", qos=1)
        self.client.on_message = lambda _client, _data, message: message.payload == b"online" and online.set()
        deadline = time.time() + 60
        while True:
            try:
                self.client.connect("127.0.0.1", self.port)
                break
            except ConnectionRefusedError:
                if time.time() > deadline:
                    self.stop()
                    raise RuntimeError("mosquitto did not start listening")
                time.sleep(0.05)
        self.client.loop_start()
        if not online.wait(max(0, deadline - time.time())):
            self.stop()
            raise RuntimeError("the bridge did not come online")

    def move(self, device, latitude, longitude, tst):
        """Publishes a fix for `device` (user/device) on its OwnTracks topic."""
        payload = json.dumps({"_type": "location", "lat": latitude, "lon": longitude, "acc": 8, "tst": tst})
        self.client.publish(f"owntracks/{device}", payload, qos=1).wait_for_publish(10)

    def stop(self):
        if getattr(self, "client", None) is not None:
            self.client.loop_stop()
            self.client.disconnect()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.broker.kill()
        self.broker.wait(timeout=10)
        self.log.close()
        shutil.rmtree(self.directory, ignore_errors=True)
