"""A fake image-model server for RemoteBackend's tests.

Listens on 127.0.0.1 on a free port, prints the port, and serves until stdin
closes. The first path segment picks a behaviour ("mode"), so every test gets
its own: POST /<mode>/v1/images/generations and /<mode>/v1/images/edits
(OpenAI dialect, the edit as multipart/form-data) and POST
/<mode>/sdapi/v1/txt2img and /img2img (AUTOMATIC1111). GET /_requests returns
what was received, with any schema violations of the request bodies: OpenAI's
checked against CreateImageRequest and CreateImageEditRequest from
Tests/Data/schemas/openai-images.json, closed to properties they do not define
(a request with one is answered 400, "Unrecognized request argument
supplied", as the API answers it), A1111's txt2img and img2img against the fields of
its request model. A request for several images (OpenAI's n, A1111's
batch_size) is answered with that many, image i in the colour COLOURS[i]."""
import base64
import json
import socket
import os
import threading
import time
from email.utils import formatdate

from openapi_schema_validator import OAS30Validator

from fake_http import JSONHandler, multipart, png, serve

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMAS = os.path.join(HERE, "..", "..", "Data", "schemas", "openai-images.json")
with open(SCHEMAS) as f:
    spec = json.load(f)


def validator_for(name):
    schema = dict(spec["components"]["schemas"][name])
    # The published schema leaves the request objects open, but the API refuses
    # a parameter it does not know: "Unrecognized request argument supplied: x".
    schema["additionalProperties"] = False
    schema["components"] = spec["components"]
    return OAS30Validator(schema)


def unrecognised(name, body):
    """The parameters of `body` that the API does not know, which it refuses."""
    known = spec["components"]["schemas"][name]["properties"]
    return [k for k in body if k not in known] if isinstance(body, dict) else []


validator = validator_for("CreateImageRequest")
edit_validator = validator_for("CreateImageEditRequest")

# The fields AUTOMATIC1111's POST /sdapi/v1/img2img takes: its request model,
# StableDiffusionImg2ImgProcessingAPI (modules/api/models.py), is made from the
# parameters of StableDiffusionProcessingImg2Img plus the API's own keys.
# Unknown keys are ignored by A1111, so a misspelt one would be lost silently.
A1111_IMG2IMG_FIELDS = {
    "prompt", "negative_prompt", "styles", "seed", "subseed", "subseed_strength", "seed_resize_from_h",
    "seed_resize_from_w", "sampler_name", "scheduler", "batch_size", "n_iter", "steps", "cfg_scale", "width",
    "height", "restore_faces", "tiling", "do_not_save_samples", "do_not_save_grid", "eta", "s_min_uncond",
    "s_churn", "s_tmax", "s_tmin", "s_noise", "override_settings", "override_settings_restore_afterwards",
    "refiner_checkpoint", "refiner_switch_at", "disable_extra_networks", "firstpass_image", "comments",
    "resize_mode", "image_cfg_scale", "mask_blur_x", "mask_blur_y", "mask_blur", "mask_round", "inpainting_fill",
    "inpaint_full_res", "inpaint_full_res_padding", "inpainting_mask_invert", "initial_noise_multiplier",
    "latent_mask", "sampler_index", "init_images", "denoising_strength", "mask", "include_init_images",
    "script_name", "script_args", "send_images", "save_images", "alwayson_scripts", "force_task_id", "infotext",
}


# POST /sdapi/v1/txt2img's request model, StableDiffusionTxt2ImgProcessingAPI:
# the common fields and the high-resolution pass's, without img2img's own.
A1111_TXT2IMG_FIELDS = (A1111_IMG2IMG_FIELDS - {
    "resize_mode", "image_cfg_scale", "mask_blur_x", "mask_blur_y", "mask_blur", "mask_round", "inpainting_fill",
    "inpaint_full_res", "inpaint_full_res_padding", "inpainting_mask_invert", "initial_noise_multiplier",
    "latent_mask", "init_images", "mask", "include_init_images",
}) | {"enable_hr", "firstphase_width", "firstphase_height", "hr_scale", "hr_upscaler", "hr_second_pass_steps",
       "hr_resize_x", "hr_resize_y", "hr_checkpoint_name", "hr_sampler_name", "hr_scheduler", "hr_prompt",
       "hr_negative_prompt", "hr_cfg", "hr_distilled_cfg"}


def txt2img_violations(body):
    if not isinstance(body, dict):
        return ["the body is not a JSON object"]
    found = [f"unknown field {k}" for k in body if k not in A1111_TXT2IMG_FIELDS]
    for key in ("width", "height", "seed", "steps", "batch_size"):
        if key in body and not isinstance(body[key], int):
            found.append(f"{key} is not an integer")
    return found


def img2img_violations(body):
    if not isinstance(body, dict):
        return ["the body is not a JSON object"]
    found = [f"unknown field {k}" for k in body if k not in A1111_IMG2IMG_FIELDS]
    images = body.get("init_images")
    if not (isinstance(images, list) and images and all(isinstance(i, str) for i in images)):
        found.append("init_images is not a list of base64 strings")
    strength = body.get("denoising_strength")
    if not (isinstance(strength, (int, float)) and 0 <= strength <= 1):
        found.append("denoising_strength is not a number from 0 to 1")
    for key in ("width", "height", "seed", "steps", "batch_size"):
        if key in body and not isinstance(body[key], int):
            found.append(f"{key} is not an integer")
    return found


def generation_violations(body):
    found = [e.message for e in validator.iter_errors(body)]
    found += [f"{k} is null" for k, v in (body or {}).items() if v is None]
    return found + dall_e_3_violations(body)


def dall_e_3_violations(body):
    # The schema's own words: "For dall-e-3, only n=1 is supported."
    if isinstance(body, dict) and body.get("model") == "dall-e-3" and str(body.get("n", 1)) != "1":
        return [f"dall-e-3 takes only n=1, not {body['n']}"]
    return []


def requested_count(body):
    """How many images a request asks for: OpenAI's n (a number, or a form
    field's text), A1111's batch_size; 1 when it does not say."""
    if not isinstance(body, dict):
        return 1
    value = body.get("n", body.get("batch_size", 1))
    try:
        return max(1, min(int(value), len(COLOURS)))
    except (TypeError, ValueError):
        return 1


def edit_violations(fields):
    if fields is None:
        return ["the body is not multipart/form-data"]
    # Form fields are text; the schema's integers and binary strings, as the API reads them.
    instance = {k: (int(v) if k in ("n", "output_compression", "partial_images") and v.isdigit() else v)
                for k, v in fields.items()}
    if isinstance(instance.get("image"), dict):
        instance["image"] = "<binary>"
    found = [e.message for e in edit_validator.iter_errors(instance)] + dall_e_3_violations(instance)
    if isinstance(fields.get("image"), dict) and fields["image"]["content_type"] not in ("image/png", "image/jpeg", "image/webp"):
        found.append(f"image has the content type {fields['image']['content_type']}")
    return found


# A request for several images (OpenAI's n, A1111's batch_size) is answered with
# that many, each its own colour: image i is COLOURS[i], so a test can tell which
# one was committed. The first is the colour every single-image answer has.
COLOURS = [(200, 40, 90), (40, 160, 90), (40, 90, 200), (230, 180, 40), (120, 60, 200),
           (30, 30, 30), (240, 240, 240), (200, 120, 40), (60, 200, 220), (150, 150, 40)]
PNGS = [png(rgb=c) for c in COLOURS]
PNG = PNGS[0]
B64 = base64.b64encode(PNG).decode()
lock = threading.Lock()
received = []


def other_port_listener():
    """A second listener on a free loopback port; any connection to it is
    logged in `received` (path "/admin") and closed."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)

    def accept():
        while True:
            connection, _ = listener.accept()
            received.append({"mode": "other-port", "path": "/admin", "body": None, "violations": [], "authorization": None})
            connection.close()

    threading.Thread(target=accept, daemon=True).start()
    return listener.getsockname()[1]
counters = {}
jobs = {}


class Handler(JSONHandler):
    def count(self, mode):
        with lock:
            counters[mode] = counters.get(mode, 0) + 1
            return counters[mode]

    def job_status(self, mode, job_id):
        with lock:
            job = jobs.get(job_id)
            if job is None:
                return 404, {"detail": "no such job"}
            job["polls"] += 1
            polls = job["polls"]
            received.append({"mode": mode, "path": self.path, "body": None, "violations": [],
                             "authorization": self.headers.get("Authorization")})
        port = self.server.server_address[1]
        if job.get("cancelled"):
            return 200, {"id": job_id, "status": "canceled"}
        if mode == "jobs-ok":
            if polls < 3:
                return 200, {"id": job_id, "status": "processing"}
            return 200, {"id": job_id, "status": "succeeded", "output": [f"http://127.0.0.1:{port}/files/badge.png"]}
        if mode == "jobs-b64":
            return 200, {"id": job_id, "status": "succeeded", "output": "data:image/png;base64," + B64}
        if mode == "jobs-fail":
            return 200, {"id": job_id, "status": "failed", "error": "CUDA out of memory"}
        return 200, {"id": job_id, "status": "processing"}

    def do_GET(self):
        parts = self.path.strip("/").split("/")
        if len(parts) == 3 and parts[1] == "predictions":
            status, body = self.job_status(parts[0], parts[2])
            return self.reply(status, body)
        if self.path == "/_requests":
            with lock:
                return self.reply(200, received)
        if self.path.startswith(("/files/", "/bounce")):
            # Result downloads are recorded too, with the credentials they carried (if any).
            with lock:
                received.append({"mode": "download", "path": self.path, "body": None, "violations": [],
                                 "authorization": self.headers.get("Authorization")})
        if self.path.startswith("/files/badge-"):
            index = int(self.path[len("/files/badge-"):].split(".")[0])
            return self.reply(200, PNGS[index], "image/png")
        if self.path.startswith("/files/"):
            return self.reply(200, PNG, "image/png")
        if self.path.startswith("/bounce-file"):
            return self.reply(302, b"", headers=[("Location", "file:///etc/passwd")])
        if self.path.startswith("/bounce-port"):
            # Same host, another port: a service the user runs.
            port = self.server.server_address[1]
            other = port + 1 if port < 65535 else port - 1
            return self.reply(302, b"", headers=[("Location", f"http://127.0.0.1:{other}/secret.png")])
        if self.path.startswith("/bounce-loop"):
            return self.reply(302, b"", headers=[("Location", "/bounce-loop-2" if self.path == "/bounce-loop" else "/bounce-loop")])
        if self.path.startswith("/bounce"):
            port = self.server.server_address[1]
            return self.reply(302, b"", headers=[("Location", f"http://localhost:{port}/files/badge.png")])
        if len(parts) == 3 and parts[1:] == ["v1", "models"] and parts[0] != "no-models":
            # OpenAI's model list, which `badge backends --probe` asks for.
            return self.reply(200, {"object": "list", "data": [{"id": "test-model", "object": "model"}]})
        # Any other path is recorded too: a test can tell a request badge should never have made.
        with lock:
            received.append({"mode": "unknown", "path": self.path, "body": None, "violations": [],
                             "authorization": self.headers.get("Authorization")})
        self.reply(404, {"error": "no such path"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        mode = self.path.strip("/").split("/")[0]
        n = self.count(mode)
        try:
            body = json.loads(raw)
        except ValueError:
            body = multipart(self.headers.get("Content-Type", ""), raw)
        violations = []
        if self.path.endswith("/images/generations"):
            violations = generation_violations(body)
        if self.path.endswith("/images/edits"):
            violations = edit_violations(body)
        if self.path.endswith("/sdapi/v1/img2img"):
            violations = img2img_violations(body)
        if self.path.endswith("/sdapi/v1/txt2img"):
            violations = txt2img_violations(body)
        with lock:
            received.append({"mode": mode, "path": self.path, "body": body, "violations": violations,
                             "authorization": self.headers.get("Authorization"), "connection_request": self.on_connection})
        if mode.startswith("drop-on-reuse") and self.on_connection > 1:
            # The image is made, and the answer lost: a server that closed an idle kept-alive connection.
            self.close_connection = True
            return
        port = self.server.server_address[1]
        a1111 = self.path.endswith(("/sdapi/v1/txt2img", "/sdapi/v1/img2img"))
        count = requested_count(body)
        images = [base64.b64encode(p).decode() for p in PNGS[:count]]
        if a1111:
            # A1111 makes a batch with the seeds seed, seed + 1, ... and says so in its info text.
            seed = body.get("seed", -1) if isinstance(body, dict) else -1
            info = json.dumps({"all_seeds": [seed + i for i in range(count)]}) if isinstance(seed, int) and seed >= 0 else "{}"
            ok = {"images": images, "parameters": {}, "info": info}
        else:
            ok = {"created": 1, "data": [{"b64_json": b, "revised_prompt": "a revised prompt"} for b in images]}
        schema = {"/images/generations": "CreateImageRequest", "/images/edits": "CreateImageEditRequest"}
        unknown = next((unrecognised(name, body) for end, name in schema.items() if self.path.endswith(end)), [])
        if unknown:
            # The API's answer to a parameter it does not know.
            return self.reply(400, {"error": {"message": f"Unrecognized request argument supplied: {unknown[0]}",
                                              "type": "invalid_request_error", "param": None, "code": None}})
        if any(v.startswith("dall-e-3 takes only n=1") for v in violations):
            return self.reply(400, {"error": {"message": f"Invalid 'n': dall-e-3 supports only n=1, got {body.get('n')}",
                                              "type": "invalid_request_error", "param": "n"}})

        if self.path.endswith("/predictions"):
            job_id = f"job-{mode}-{n}"
            if mode == "jobs-traversal":
                job_id = "../../admin/wipe"
            if mode == "jobs-slash":
                job_id = "a/b"
            if mode == "jobs-echo-key":
                # A valid id that is the key itself: logged on cancel, named in the timeout.
                job_id = (self.headers.get("Authorization") or "").replace("Bearer ", "")
            with lock:
                jobs[job_id] = {"polls": 0}
            if mode == "jobs-slow-submit":
                # The job exists from here on, but the client hears of it only a second later.
                time.sleep(1.0)
            return self.reply(201, {"id": job_id, "status": "starting"})
        if self.path.endswith("/cancel"):
            with lock:
                job_id = self.path.strip("/").split("/")[2]
                if job_id in jobs:
                    jobs[job_id]["cancelled"] = True
            return self.reply(200, {"id": job_id, "status": "canceled"})
        if self.path.endswith("/raw"):
            if mode == "ok":
                return self.reply(200, PNG, "image/png")
            if mode == "raw-json":
                return self.reply(200, {"error": "Model is currently loading", "estimated_time": 20})
        if mode == "ok" or mode.startswith("drop-on-reuse"):
            return self.reply(200, ok)
        if mode == "drop-always" or (mode == "drop-once" and n == 1):
            # The connection is lost after the request arrived and before any answer
            # (a restarted server, a proxy's idle cut): closed with nothing written.
            # "drop-once" answers every later request.
            self.close_connection = True
            return
        if mode == "drop-once":
            return self.reply(200, ok)
        if mode == "not-http":
            # No status line: a service of another protocol on the configured port.
            self.wfile.write(b"garbage not http\r\n\r\n")
            self.wfile.flush()
            self.close_connection = True
            return
        if mode == "slow":
            # A model's latency, for batch runs that must overlap their waits.
            time.sleep(0.25)
            return self.reply(200, ok)
        if mode == "url":
            return self.reply(200, {"data": [{"url": f"http://127.0.0.1:{port}/files/badge-{i}.png"} for i in range(count)]})
        if mode == "short":
            # Fewer images than asked for: a server that refused some of them.
            key = "images" if a1111 else "data"
            ok[key] = ok[key][:2]
            return self.reply(200, ok)
        if mode == "second-not-base64":
            ok["data"][1]["b64_json"] = "!!!!not*base64@@@"
            return self.reply(200, ok)
        if mode == "flaky503":
            if n <= 2:
                return self.reply(503, "<html><body><h1>503 Service Unavailable</h1></body></html>", "text/html")
            return self.reply(200, ok)
        if mode == "retry-after-seconds":
            return self.reply(429, {"error": {"message": "slow down"}}, headers=[("Retry-After", "1")]) if n == 1 else self.reply(200, ok)
        if mode == "retry-after-ms":
            return self.reply(429, {"error": {"message": "slow down"}}, headers=[("retry-after-ms", "300")]) if n == 1 else self.reply(200, ok)
        if mode == "retry-after-date":
            when = formatdate(time.time() + 1, usegmt=True)
            return self.reply(429, {"error": {"message": "slow down"}}, headers=[("Retry-After", when)]) if n == 1 else self.reply(200, ok)
        if mode.startswith("sustained-429-"):
            # Every answer is a 429 asking to wait the seconds the mode names.
            return self.reply(429, {"error": {"message": "rate limited"}}, headers=[("Retry-After", mode.split("-")[2])])
        if mode == "moved":
            # The API moved: a redirect badge does not follow with the key (a query that must not be shown).
            return self.reply(302, "", "text/plain", headers=[("Location", "https://api.example.org/v2/images?key=secret-in-query")])
        if mode == "retry-after-huge":
            return self.reply(429, {"error": {"message": "quota exhausted"}}, headers=[("Retry-After", "86400")])
        if mode in ("500", "502", "503"):
            return self.reply(int(mode), f"<!DOCTYPE html><html><body>{mode} Bad things</body></html>", "text/html")
        if mode == "truncated":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(json.dumps(ok).encode()[:200])
            self.wfile.flush()
            self.close_connection = True
            return
        if mode == "html-200":
            return self.reply(200, "<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1></body></html>", "text/html")
        if mode == "garbage":
            return self.reply(200, "this is {not json")
        if mode == "deep":
            # Valid JSON, nested past what a decoder reads.
            return self.reply(200, '{"data": ' + "[" * 2000 + "]" * 2000 + "}")
        if mode == "bad-base64":
            return self.reply(200, {"data": [{"b64_json": "!!!!not*base64@@@"}]})
        if mode == "not-an-image":
            return self.reply(200, {"data": [{"b64_json": base64.b64encode(b"hello, I am a text file, not a picture").decode()}]})
        if mode == "empty-data":
            return self.reply(200, {"data": []})
        if mode == "error-string":
            return self.reply(400, {"error": "the prompt is not allowed"})
        if mode == "error-object":
            return self.reply(400, {"error": {"message": "Your request was rejected by the safety system", "type": "invalid_request_error"}},
                              headers=[("x-request-id", "req_abc123")])
        if mode == "echo-key":
            key = (self.headers.get("Authorization") or "").replace("Bearer ", "")
            return self.reply(401, {"error": {"message": f"Incorrect API key provided: {key}"}})
        if mode == "echo-key-split":
            # Every way a server has echoed a key: whole, split by a line break, with a
            # zero-width joiner inside, and as OpenAI's partial "sk-...abcd".
            key = (self.headers.get("Authorization") or "").replace("Bearer ", "")
            half = len(key) // 2
            message = (f"Incorrect API key provided: {key[:3]}...{key[-4:]}; you sent {key}, or {key[:half]}\n{key[half:]}"
                       f" or {key[:half]}\u200d{key[half:]}")
            return self.reply(401, {"error": {"message": message}}, headers=[("x-request-id", key)])
        if mode.startswith("echo-key-pieces-"):
            # The key echoed in pieces too short to mask one by one: split by spaces every 7
            # characters, by dashes every 3, reversed, or base64-encoded.
            key = (self.headers.get("Authorization") or "").replace("Bearer ", "")
            form = mode[len("echo-key-pieces-"):]
            echoed = {"spaced": " ".join(key[i:i + 7] for i in range(0, len(key), 7)),
                      "dashed": "-".join(key[i:i + 3] for i in range(0, len(key), 3)),
                      "reversed": key[::-1],
                      "base64": base64.b64encode(key.encode()).decode()}[form]
            return self.reply(401, {"error": {"message": f"key was {echoed}"}})
        if mode == "json-values":
            # 60 MB of values under a 64 MiB maxResponseBytes: 30 million zeros.
            return self.reply(200, b'{"data":[' + b"0," * 30_000_000 + b'0]}')
        if mode == "huge":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                chunk = b"A" * 65536
                for _ in range(400):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        if mode == "drip":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            try:
                for _ in range(1000):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.3)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        if mode == "hang":
            time.sleep(60)
            return
        if mode == "echo-key-in-request-id":
            # A hostile server: the key echoed in a header, terminal escapes (a
            # window title, clear screen, an 8-bit CSI) in its message and revised prompt.
            auth = self.headers.get("Authorization") or ""
            return self.reply(400, {"error": {"message": "\x1b]0;pwned\x07\x1b[2Jrefused \u009b31mfor you"}},
                              headers=[("x-request-id", "req-" + auth)])
        if mode == "escapes-in-message":
            # Terminal escapes in the message and request id, and no key: the words are shown, cleaned.
            return self.reply(400, {"error": {"message": "\x1b]0;pwned\x07\x1b[2Jrefused \u009b31mfor you"}},
                              headers=[("x-request-id", "req-\x1b[31m42")])
        if mode == "escapes-in-revised-prompt":
            return self.reply(200, {"data": [{"b64_json": B64, "revised_prompt": "calm\x1b[2J\x1b]0;pwned\x07 sea"}]})
        if mode == "url-other-port":
            # Another port of the same loopback host: a service the user runs. It
            # listens, and a connection to it is logged as the path "/admin".
            return self.reply(200, {"data": [{"url": f"http://127.0.0.1:{other_port_listener()}/admin"}]})
        if mode == "url-https-localhost":
            # A host the config admits (resultHosts), over https, answered by this plain-http server.
            return self.reply(200, {"data": [{"url": f"https://localhost:{port}/files/badge.png"}]})
        if mode == "url-file":
            return self.reply(200, {"data": [{"url": "file:///etc/passwd"}]})
        if mode == "url-redirect-other-host":
            return self.reply(200, {"data": [{"url": f"http://127.0.0.1:{port}/bounce"}]})
        if mode == "url-redirect-other-port":
            return self.reply(200, {"data": [{"url": f"http://127.0.0.1:{port}/bounce-port"}]})
        if mode == "url-redirect-loop":
            return self.reply(200, {"data": [{"url": f"http://127.0.0.1:{port}/bounce-loop"}]})
        if mode == "url-redirect-file":
            return self.reply(200, {"data": [{"url": f"http://127.0.0.1:{port}/bounce-file"}]})
        self.reply(404, {"error": f"unknown mode {mode}"})


serve(Handler)
