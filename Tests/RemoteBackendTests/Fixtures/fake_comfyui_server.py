"""A fake ComfyUI server for RemoteBackend's and the CLI's tests.

Listens on 127.0.0.1 on a free port, prints the port, and serves until stdin
closes. The first path segment picks a behaviour ("mode"), so every test gets
its own base URL (http://127.0.0.1:PORT/<mode>). The routes and answers are
ComfyUI's (server.py): POST /upload/image (multipart), POST /prompt (a workflow
in API format and a client_id; node_errors when it does not validate), GET
/history/{prompt_id}, GET /view?filename=&subfolder=&type=, GET /queue,
POST /interrupt, POST /queue {"delete": [...]}, GET /system_stats and
GET /object_info/CheckpointLoaderSimple. GET /_requests returns what was
received, with the problems found in each workflow and which request of its
connection each was. In mode "drop-on-reuse" every POST that arrives on a
connection that served a request before is acted on and left unanswered.

A workflow is validated as ComfyUI's execution.validate_prompt does, against
the node classes and inputs of Tests/Data/comfyui/object_info.json (what a
server's /object_info answers for the classes badge's workflows use, written
from ComfyUI's nodes.py: Tests/Data/README.md says how): a class
the server does not have, a required input missing, a value that does not
convert to its type, is out of its range or not in its list, or a link of the
wrong type is refused with 400 and ComfyUI's error and node_errors. An input
the class does not have is refused too, although ComfyUI drops it silently: a
misspelt input would otherwise be lost without a word."""
import copy
import hashlib
import json
import os
import threading
import time
import uuid
from urllib.parse import parse_qs, urlsplit

from fake_http import JSONHandler, multipart, png, serve

CHECKPOINT = "v1-5-pruned-emaonly.safetensors"
HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "..", "Data", "comfyui", "object_info.json")) as f:
    OBJECT_INFO = json.load(f)


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


def checkpoints(mode):
    if mode == "probe-no-models":
        # A fresh install: models/checkpoints is empty, and /object_info lists no names.
        return []
    return ["sd_xl_base_1.0.safetensors"] if mode == "probe-missing" else [CHECKPOINT, "sd_xl_base_1.0.safetensors"]


def object_info(mode):
    """The committed /object_info with what depends on the install filled in:
    the checkpoints this server has and the pictures uploaded to it. probe-combo
    writes lists in the newer ["COMBO", {"options": [...]}] form; probe-no-class
    has no KSampler."""
    classes = copy.deepcopy(OBJECT_INFO)
    classes["CheckpointLoaderSimple"]["input"]["required"]["ckpt_name"][0] = checkpoints(mode)
    with lock:
        classes["LoadImage"]["input"]["required"]["image"][0] = sorted(uploads)
    if mode == "probe-combo":
        for info in classes.values():
            for name, spec in info["input"].get("required", {}).items():
                if isinstance(spec[0], list):
                    info["input"]["required"][name] = ["COMBO", {**(spec[1] if len(spec) > 1 else {}), "options": spec[0]}]
    if mode == "probe-no-class":
        del classes["KSampler"]
    return classes


def input_errors(node_id, node, prompt, classes):
    """The reasons ComfyUI's validate_inputs gives for one node (type, message,
    details and extra_info as execution.py writes them)."""
    info = classes[node["class_type"]]["input"]
    declared = {**info.get("required", {}), **info.get("optional", {})}
    inputs = node["inputs"]
    reasons = []

    def reason(kind, message, details, name, **extra):
        reasons.append({"type": kind, "message": message, "details": details,
                        "extra_info": {"input_name": name, **extra}})

    for name in info.get("required", {}):
        if name not in inputs:
            reason("required_input_missing", "Required input is missing", name, name)
    for name, value in inputs.items():
        spec = declared.get(name)
        if spec is None:
            reason("unknown_input", "Input is not one of the node's inputs", f"{name}: {node['class_type']} has "
                   + ", ".join(declared), name,
                   note="ComfyUI ignores an input its node does not have; this fake refuses it")
            continue
        kind, options = spec[0], (spec[1] if len(spec) > 1 else {})
        if isinstance(value, list):
            if len(value) != 2 or not isinstance(value[1], int):
                reason("bad_linked_input", "Bad linked input, must be a length-2 list of [string, int]", name, name,
                       received_value=value)
                continue
            source = prompt.get(str(value[0]))
            outputs = classes.get(source["class_type"], {}).get("output", []) if isinstance(source, dict) else []
            received = outputs[value[1]] if 0 <= value[1] < len(outputs) else None
            if received is None or (isinstance(kind, str) and received != kind):
                reason("return_type_mismatch", "Return type mismatch between linked nodes",
                       f"{name}, received_type({received}) mismatch input_type({kind})", name, received_value=value)
            continue
        if name == "image" and node["class_type"] == "LoadImage":
            continue  # LoadImage's own VALIDATE_INPUTS checks it (node_errors_for)
        converters = {"INT": int, "FLOAT": float, "STRING": str, "BOOLEAN": bool}
        if isinstance(kind, str) and kind in converters:
            try:
                value = converters[kind](value)
            except (TypeError, ValueError) as error:
                reason("invalid_input_type", f"Failed to convert an input value to a {kind} value",
                       f"{name}, {value}, {error}", name, received_value=value)
                continue
            if "min" in options and value < options["min"]:
                reason("value_smaller_than_min", f"Value {value} smaller than min of {options['min']}", name, name,
                       received_value=value)
            if "max" in options and value > options["max"]:
                reason("value_bigger_than_max", f"Value {value} bigger than max of {options['max']}", name, name,
                       received_value=value)
        elif isinstance(kind, list):
            if value not in kind:
                # As ComfyUI words it: a list of more than 20 is given by its length alone.
                listed = f"(list of length {len(kind)})" if len(kind) > 20 else str(kind)
                reason("value_not_in_list", "Value not in list", f"{name}: '{value}' not in {listed}", name,
                       input_config=None if len(kind) > 20 else spec, received_value=value)
        else:
            reason("return_type_mismatch", "Return type mismatch between linked nodes",
                   f"{name}, a value where a {kind} link is expected", name, received_value=value)
    return reasons


def missing_node_type(node_id, class_type, title):
    """ComfyUI's refusal of a node whose class it does not have (execution.py's validate_prompt)."""
    return {"type": "missing_node_type", "message": f"Node '{title or class_type}' not found. The custom node may not be installed.",
            "details": f"Node ID '#{node_id}'", "extra_info": {"node_id": node_id, "class_type": class_type, "node_title": title}}


def validate_prompt(mode, prompt):
    """What ComfyUI's validate_prompt answers for a workflow it refuses: (error,
    node_errors), or None when it would queue it. LoadImage's picture is checked
    by node_errors_for."""
    classes = object_info(mode)
    for node_id, node in prompt.items():
        title = node.get("_meta", {}).get("title") if isinstance(node, dict) and isinstance(node.get("_meta"), dict) else None
        if not isinstance(node, dict) or "class_type" not in node:
            return {"type": "missing_node_type",
                    "message": f"Node '{title or f'ID #{node_id}'}' has no class_type. The workflow may be corrupted or a custom node is missing.",
                    "details": f"Node ID '#{node_id}'", "extra_info": {"node_id": node_id, "class_type": None, "node_title": title}}, {}
        if node["class_type"] not in classes:
            return missing_node_type(node_id, node["class_type"], title), {}
    outputs = [node_id for node_id, node in prompt.items() if classes[node["class_type"]].get("output_node")]
    if not outputs:
        return {"type": "prompt_no_outputs", "message": "Prompt has no outputs", "details": "", "extra_info": {}}, {}
    errors = {}
    for node_id, node in prompt.items():
        inputs = node.get("inputs") if isinstance(node.get("inputs"), dict) else {}
        reasons = input_errors(node_id, {"class_type": node["class_type"], "inputs": inputs}, prompt, classes)
        if reasons:
            errors[node_id] = {"errors": reasons, "dependent_outputs": outputs, "class_type": node["class_type"]}
    if errors:
        details = "".join(f"{r['message']}: {r['details']}\n" for e in errors.values() for r in e["errors"])
        return {"type": "prompt_outputs_failed_validation", "message": "Prompt outputs failed validation",
                "details": details, "extra_info": {}}, errors
    return None


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
                             "body": body, "violations": list(problems), "authorization": self.headers.get("Authorization"),
                             "connection_request": self.on_connection})

    def reply(self, status, body, content_type="application/json", headers=()):
        if getattr(self, "drop_answer", False):
            # Acted on, and the answer lost: the connection closes with nothing written.
            self.close_connection = True
            return
        super().reply(status, body, content_type, headers)

    def split(self):
        parts = urlsplit(self.path).path.strip("/").split("/")
        return parts[0], "/" + "/".join(parts[1:])

    def do_GET(self):
        self.drop_answer = False
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
            classes = object_info(mode)
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
        # "slow-run": a run that takes 2.6 s from being queued.
        slow = mode == "slow-run" and time.monotonic() - run["queued_at"] < 2.6
        if mode in ("hang", "pending", "pending-copies") or (mode == "ok" and polls < 3) or slow:
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
        # As a server that closed an idle kept-alive connection as the request arrived:
        # every POST on a connection that served a request before is acted on, unanswered.
        self.drop_answer = mode == "drop-on-reuse" and self.on_connection > 1
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
            # As a server without node 3's class (a custom node not installed) answers:
            # 400, the class in the message, the node in details, node_errors empty.
            node = prompt.get("3") if isinstance(prompt.get("3"), dict) else {}
            meta = node.get("_meta") if isinstance(node.get("_meta"), dict) else {}
            return self.reply(400, {"error": missing_node_type("3", node.get("class_type"), meta.get("title")), "node_errors": {}})
        refused = validate_prompt(mode, prompt)
        if refused is not None:
            error, node_errors = refused
            return self.reply(400, {"error": error, "node_errors": node_errors})
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
            runs[prompt_id] = {"mode": mode, "polls": 0, "number": number, "client_id": body.get("client_id"), "prompt": prompt,
                               "queued_at": time.monotonic()}
        return self.reply(200, {"prompt_id": prompt_id, "number": number, "node_errors": {}})


serve(Handler)
