"""A fake ComfyUI server for RemoteBackend's and the CLI's tests.

Listens on 127.0.0.1 on a free port, prints the port, and serves until stdin
closes. The first path segment picks a behaviour ("mode"), so every test gets
its own base URL (http://127.0.0.1:PORT/<mode>). The routes and answers are
ComfyUI's (server.py): POST /upload/image (multipart), POST /prompt (a workflow
in API format and a client_id; node_errors when it does not validate), GET
/history/{prompt_id}, GET /view?filename=&subfolder=&type=, GET /queue,
POST /interrupt, POST /queue {"delete": [...]}, GET /system_stats and
GET /object_info/CheckpointLoaderSimple. GET /_requests returns what was
received, with the problems found in each workflow."""
import hashlib
import json
import threading
import time
import uuid
from urllib.parse import parse_qs, urlsplit

from fake_http import JSONHandler, multipart, png, serve

CHECKPOINT = "v1-5-pruned-emaonly.safetensors"


PNG = png(64, 64, (30, 160, 90))
lock = threading.Lock()
received = []
counters = {}
runs = {}        # prompt_id -> {"mode", "polls", "number", "client_id"}
stored = {}      # uploaded file name -> sha256 of its bytes
uploads = set()  # names of uploaded pictures


def workflow_problems(body):
    """What ComfyUI's validation would refuse, in the parts badge fills."""
    if not isinstance(body, dict):
        return ["the body is not a JSON object"]
    found = []
    if not isinstance(body.get("client_id"), str) or not body["client_id"]:
        found.append("no client_id")
    prompt = body.get("prompt")
    if not isinstance(prompt, dict) or not prompt:
        return found + ["prompt is not a workflow in API format"]
    for node_id, node in prompt.items():
        if not isinstance(node, dict) or not isinstance(node.get("class_type"), str) or not isinstance(node.get("inputs"), dict):
            found.append(f"node {node_id} has no class_type and inputs")
            continue
        inputs = node["inputs"]
        for name, value in inputs.items():
            if isinstance(value, list) and (len(value) != 2 or str(value[0]) not in prompt):
                found.append(f"node {node_id} input {name} links to a node that is not there")
        kind = node["class_type"]
        if kind == "CLIPTextEncode" and not isinstance(inputs.get("text"), str):
            found.append(f"node {node_id} text is not a string")
        if kind == "KSampler":
            if not (isinstance(inputs.get("seed"), int) and 0 <= inputs["seed"] <= 0xFFFFFFFFFFFFFFFF):
                found.append(f"node {node_id} seed is not a 64-bit unsigned integer")
            if not (isinstance(inputs.get("denoise"), (int, float)) and 0 <= inputs["denoise"] <= 1):
                found.append(f"node {node_id} denoise is not from 0 to 1")
        if kind == "EmptyLatentImage":
            for key in ("width", "height"):
                if not (isinstance(inputs.get(key), int) and 16 <= inputs[key] <= 16384 and inputs[key] % 8 == 0):
                    found.append(f"node {node_id} {key} is not a multiple of 8 from 16 to 16384")
    return found


def node_errors_for(prompt):
    """ComfyUI's answer to a workflow whose LoadImage names a picture it does not have."""
    errors = {}
    for node_id, node in prompt.items():
        if node.get("class_type") == "LoadImage" and node["inputs"].get("image") not in uploads:
            errors[node_id] = {"errors": [{"type": "custom_validation_failed", "message": "Custom validation failed for node",
                                           "details": f"image - Invalid image file: {node['inputs'].get('image')}",
                                           "extra_info": {"input_name": "image"}}],
                               "dependent_outputs": ["9"], "class_type": "LoadImage"}
    return errors


class Handler(JSONHandler):
    def record(self, mode, route, body=None, problems=()):
        with lock:
            received.append({"mode": mode, "method": self.command, "path": route, "query": urlsplit(self.path).query,
                             "body": body, "violations": list(problems), "authorization": self.headers.get("Authorization")})

    def split(self):
        parts = urlsplit(self.path).path.strip("/").split("/")
        return parts[0], "/" + "/".join(parts[1:])

    def do_GET(self):
        if self.path == "/_requests":
            with lock:
                return self.reply(200, received)
        mode, route = self.split()
        self.record(mode, route)
        if route == "/system_stats":
            if mode == "not-comfyui":
                return self.reply(200, "<!DOCTYPE html><html><body>Welcome</body></html>", "text/html")
            return self.reply(200, {"system": {"os": "posix", "comfyui_version": "0.3.40", "python_version": "3.11"},
                                    "devices": [{"name": "cuda:0", "type": "cuda", "vram_total": 8589934592}]})
        if route in ("/object_info", "/object_info/CheckpointLoaderSimple"):
            names = ["sd_xl_base_1.0.safetensors"] if mode == "probe-missing" else [CHECKPOINT, "sd_xl_base_1.0.safetensors"]
            def combo(values):
                return ["COMBO", {"options": values}] if mode == "probe-combo" else [values, {"tooltip": "one of these"}]
            classes = {
                "CheckpointLoaderSimple": {"input": {"required": {"ckpt_name": combo(names)}}, "output": ["MODEL", "CLIP", "VAE"]},
                "KSampler": {"input": {"required": {"model": ["MODEL"], "seed": ["INT", {}], "steps": ["INT", {}], "cfg": ["FLOAT", {}],
                                                    "sampler_name": combo(["euler", "dpmpp_2m"]), "scheduler": combo(["normal", "karras"]),
                                                    "positive": ["CONDITIONING"], "negative": ["CONDITIONING"], "latent_image": ["LATENT"],
                                                    "denoise": ["FLOAT", {}]}}},
                "EmptyLatentImage": {"input": {"required": {"width": ["INT", {}], "height": ["INT", {}], "batch_size": ["INT", {}]}}},
                "CLIPTextEncode": {"input": {"required": {"text": ["STRING", {}], "clip": ["CLIP"]}}},
                "VAEDecode": {"input": {"required": {"samples": ["LATENT"], "vae": ["VAE"]}}},
                "VAEEncode": {"input": {"required": {"pixels": ["IMAGE"], "vae": ["VAE"]}}},
                "SaveImage": {"input": {"required": {"images": ["IMAGE"], "filename_prefix": ["STRING", {}]}}},
                "LoadImage": {"input": {"required": {"image": combo(sorted(uploads))}}},
            }
            if mode == "probe-no-class":
                del classes["KSampler"]
            if route == "/object_info/CheckpointLoaderSimple":
                return self.reply(200, {"CheckpointLoaderSimple": classes["CheckpointLoaderSimple"]})
            return self.reply(200, classes)
        if route.startswith("/history/"):
            return self.history(mode, route[len("/history/"):])
        if route == "/queue":
            with lock:
                mine = [(rid, run) for rid, run in runs.items() if run["mode"] == mode and not run.get("deleted")]
            running = [[run["number"], rid, {}, {"client_id": run.get("client_id")}, ["9"]] for rid, run in mine if mode in ("hang", "ok")]
            pending = [[run["number"], rid, {}, {"client_id": run.get("client_id")}, ["9"]] for rid, run in mine
                       if mode in ("pending", "pending-copies")]
            if mode == "pending-copies":
                # A copy of the run an earlier attempt queued (same client_id), and another client's run.
                pending += [[run["number"] + 100, "copy-" + rid, {}, {"client_id": run.get("client_id")}, ["9"]] for rid, run in mine]
                pending += [[999, "someone-else", {}, {"client_id": "another-client"}, ["9"]]]
            return self.reply(200, {"queue_running": running, "queue_pending": pending})
        if route == "/view":
            query = parse_qs(urlsplit(self.path).query, keep_blank_values=True)
            if query.get("type") != ["output"] or not query.get("filename"):
                return self.reply(400, {"error": "bad view request"})
            return self.reply(200, PNG, "image/png")
        self.reply(404, {"error": "no such route"})

    def history(self, mode, prompt_id):
        with lock:
            run = runs.get(prompt_id)
            if run is None:
                return self.reply(200, {})
            run["polls"] += 1
            polls = run["polls"]
        if mode in ("hang", "pending", "pending-copies") or (mode == "ok" and polls < 3):
            # Queued or running: ComfyUI's history has no entry for the run yet.
            return self.reply(200, {})
        outputs = {"9": {"images": [{"filename": "badge_00001_.png", "subfolder": "", "type": "output"}]}}
        status = {"status_str": "success", "completed": True, "messages": [["execution_start", {"prompt_id": prompt_id}],
                                                                           ["execution_success", {"prompt_id": prompt_id}]]}
        if mode == "view-escape":
            outputs = {"9": {"images": [{"filename": "passwd", "subfolder": "../../../etc", "type": "output"}]}}
        if mode == "view-temp":
            outputs = {"9": {"images": [{"filename": "../secret.png", "subfolder": "", "type": "temp"}]}}
        if mode == "exec-error":
            outputs = {}
            status = {"status_str": "error", "completed": False, "messages": [
                ["execution_start", {"prompt_id": prompt_id}],
                ["execution_error", {"prompt_id": prompt_id, "node_id": "3", "node_type": "KSampler",
                                     "exception_message": "CUDA out of memory. Tried to allocate 2.00 GiB",
                                     "exception_type": "torch.OutOfMemoryError", "traceback": []}]]}
        return self.reply(200, {prompt_id: {"prompt": [1, prompt_id, {}, {}, ["9"]], "outputs": outputs, "status": status, "meta": {}}})

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        mode, route = self.split()
        with lock:
            counters[(mode, route)] = counters.get((mode, route), 0) + 1
            n = counters[(mode, route)]
        if route == "/upload/image":
            fields = multipart(self.headers.get("Content-Type", ""), raw)
            problems = [] if fields and isinstance(fields.get("image"), dict) else ["no image file part"]
            self.record(mode, route, fields, problems)
            if problems:
                return self.reply(400, {"error": "no image"})
            name = fields["image"]["filename"]
            digest = hashlib.sha256(fields["image"]["b64"].encode()).hexdigest()
            if mode == "upload-rename":
                # A server that files uploads under names of its own: the answer's name is the one to use.
                name = "server-" + name
            with lock:
                # As ComfyUI does without overwrite=true: a different file of the same name is
                # kept, and the new one renamed "name (1).png".
                if fields.get("overwrite") != "true":
                    stem, dot, ext = name.rpartition(".")
                    k = 1
                    while name in stored and stored[name] != digest:
                        name = f"{stem} ({k}).{ext}" if dot else f"{name} ({k})"
                        k += 1
                stored[name] = digest
                uploads.add(name)
            return self.reply(200, {"name": name, "subfolder": "", "type": "input"})
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        if route in ("/interrupt", "/queue"):
            self.record(mode, route, body)
            if route == "/queue" and isinstance(body, dict):
                with lock:
                    for rid in body.get("delete", []):
                        if rid in runs:
                            runs[rid]["deleted"] = True
            return self.reply(200, {})
        if route != "/prompt":
            self.record(mode, route, body)
            return self.reply(404, {"error": "no such route"})

        self.record(mode, route, body, workflow_problems(body))
        if mode == "html-200":
            return self.reply(200, "<!DOCTYPE html><html><body><h1>ComfyUI</h1></body></html>", "text/html")
        if mode == "retry-after" and n == 1:
            return self.reply(429, {"error": {"message": "slow down"}}, headers=[("Retry-After", "1")])
        if mode == "flaky503" and n <= 2:
            return self.reply(503, "<html><body>503 Service Unavailable</body></html>", "text/html", headers=[("Retry-After", "0")])
        if mode == "truncated":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b'{"prompt_id": "')
            self.wfile.flush()
            self.close_connection = True
            return
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
        if mode == "hang-prompt":
            time.sleep(60)
            return
        if mode == "echo-key":
            key = (self.headers.get("Authorization") or "").replace("Bearer ", "")
            return self.reply(401, {"error": {"message": f"Incorrect API key provided: {key}"}})
        prompt = body.get("prompt") if isinstance(body, dict) else None
        if not isinstance(prompt, dict):
            return self.reply(400, {"error": {"type": "invalid_prompt", "message": "Cannot execute because the prompt is not a workflow",
                                              "details": "", "extra_info": {}}, "node_errors": {}})
        if mode == "missing-class":
            # Real ComfyUI for a class_type it does not have: 400, the node in details, node_errors empty.
            return self.reply(400, {"error": {"type": "missing_node_type", "message": "Cannot execute because a node is missing the class_type property.",
                                              "details": "Node ID '#3'", "extra_info": {}}, "node_errors": {}})
        errors = node_errors_for(prompt)
        if mode == "drop-after-queue" and n == 1:
            # The run is queued, then the connection drops before the answer: the client
            # cannot know, unless it looks its own prompt_id up.
            with lock:
                prompt_id = body.get("prompt_id") or str(uuid.uuid4())
                runs[prompt_id] = {"mode": mode, "polls": 0, "number": len(runs), "client_id": body.get("client_id")}
            self.close_connection = True
            return
        if mode == "node-errors-200":
            # Real ComfyUI: a workflow with one bad output still queues the valid ones ("Output will be ignored").
            prompt_id = body.get("prompt_id") or str(uuid.uuid4())
            with lock:
                runs[prompt_id] = {"mode": mode, "polls": 0, "number": len(runs), "client_id": body.get("client_id")}
            return self.reply(200, {"prompt_id": prompt_id, "number": runs[prompt_id]["number"], "node_errors": {
                "12": {"errors": [{"type": "value_not_in_list", "message": "Value not in list", "details": "upscale_model: 'x.pth' not in []",
                                   "extra_info": {"input_name": "upscale_model"}}], "dependent_outputs": ["13"], "class_type": "UpscaleModelLoader"}}})
        if mode == "node-errors":
            errors["4"] = {"errors": [{"type": "value_not_in_list", "message": "Value not in list",
                                       "details": f"ckpt_name: '{CHECKPOINT}' not in ['sd_xl_base_1.0.safetensors']",
                                       "extra_info": {"input_name": "ckpt_name"}}],
                           "dependent_outputs": ["9"], "class_type": "CheckpointLoaderSimple"}
        if errors:
            return self.reply(400, {"error": {"type": "prompt_outputs_failed_validation", "message": "Prompt outputs failed validation",
                                              "details": "", "extra_info": {}}, "node_errors": errors})
        prompt_id = body.get("prompt_id") or str(uuid.uuid4())
        with lock:
            number = len(runs)
            runs[prompt_id] = {"mode": mode, "polls": 0, "number": number, "client_id": body.get("client_id"), "prompt": prompt}
        return self.reply(200, {"prompt_id": prompt_id, "number": number, "node_errors": {}})


serve(Handler)
