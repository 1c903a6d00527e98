"""The Bot API description (``api.min.json``) and validation of calls against it.

``Spec.load()`` finds the JSON in this order: ``$BOTAPI_SPEC``, ``playground/emulator/api.min.json`` (beside this module),
``<repo>/../shared/botapi/api.min.json``. ``Spec.check_call`` turns the raw parameters of one
HTTP call (form fields are strings; JSON bodies carry typed values; nested objects may come
as JSON strings in both) into typed Python values, raising :class:`ApiError` (400) on what
Telegram would refuse and collecting soft *notes* (unknown parameters or fields, which
Telegram silently ignores). ``Spec.check_object`` checks an object we *produce* (Message,
Update...) against its type, for the emulator's own tests.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ApiError", "FileRef", "Spec"]

_PRIMITIVES = {"Integer", "String", "Boolean", "Float", "True", "InputFile"}
_INT_RE = re.compile(r"^[+-]?\d+$")
_FLOAT_RE = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_DISC_RE = re.compile(r'(?:must be|always)\s+[“"]?([A-Za-z_][\w-]*)[”"]?')


class ApiError(Exception):
    """An error answer of the Bot API.

    ``violation`` marks errors caused by a malformed call (the bot's fault: wrong types,
    limits, HTML...), as opposed to runtime answers (403 blocked, 429, not modified...).
    """

    def __init__(self, code: int, description: str, parameters: dict | None = None, *, violation: bool = False):
        super().__init__(description)
        self.code = code
        self.description = description
        self.parameters = parameters
        self.violation = violation

    def to_json(self) -> dict:
        out: dict[str, Any] = {"ok": False, "error_code": self.code, "description": self.description}
        if self.parameters:
            out["parameters"] = self.parameters
        return out


def bad_request(text: str, parameters: dict | None = None) -> ApiError:
    """A 400 caused by a malformed call (recorded as a violation)."""
    return ApiError(400, f"Bad Request: {text}", parameters, violation=True)


@dataclass
class FileRef:
    """A file uploaded in a multipart request."""

    filename: str | None
    content_type: str | None
    data: bytes = field(repr=False)


def _default_paths() -> list[Path]:
    here = Path(__file__).resolve().parent
    paths = []
    if os.environ.get("BOTAPI_SPEC"):
        paths.append(Path(os.environ["BOTAPI_SPEC"]))
    paths.append(here / "api.min.json")
    repo = here.parent.parent
    paths.append(repo.parent / "shared" / "botapi" / "api.min.json")
    return paths


class Spec:
    """Methods and types of the Bot API, with call validation."""

    _cache: Spec | None = None

    def __init__(self, data: dict):
        self.version: str = data.get("version", "?")
        self.methods: dict[str, dict] = data["methods"]
        self.types: dict[str, dict] = data["types"]
        self._lower = {name.lower(): name for name in self.methods}
        self._fields = {name: {f["name"]: f for f in t.get("fields", [])} for name, t in self.types.items()}
        self._method_fields = {name: {f["name"]: f for f in m.get("fields", [])} for name, m in self.methods.items()}
        # abstract type -> (discriminator field, {value: subtype})
        self._disc: dict[str, tuple[str, dict[str, str]]] = {}
        for name, t in self.types.items():
            subs = t.get("subtypes")
            if not subs:
                continue
            mapping: dict[str, str] = {}
            key = None
            for sub in subs:
                for f in self.types.get(sub, {}).get("fields", []):
                    if f["name"] in ("type", "status", "source"):
                        m = _DISC_RE.search(f["description"])
                        if m:
                            key = f["name"]
                            mapping[m.group(1)] = sub
                            break
            if key:
                self._disc[name] = (key, mapping)

    @classmethod
    def load(cls, path: str | os.PathLike | None = None) -> Spec:
        """Load (and cache, when ``path`` is None) the spec."""
        if path is None and cls._cache is not None:
            return cls._cache
        candidates = [Path(path)] if path else _default_paths()
        for p in candidates:
            if p.is_file():
                spec = cls(json.loads(p.read_text(encoding="utf-8")))
                if path is None:
                    cls._cache = spec
                return spec
        raise FileNotFoundError(f"api.min.json not found in {[str(p) for p in candidates]}")

    # ------------------------------------------------------------------ lookup
    def canonical_method(self, name: str) -> str | None:
        """The method's canonical name (Telegram matches method names case-insensitively)."""
        return self._lower.get(name.lower())

    def method_fields(self, method: str) -> dict[str, dict]:
        return self._method_fields[method]

    def returns(self, method: str) -> list[str]:
        return self.methods[method].get("returns", [])

    # ------------------------------------------------------------- validation
    def check_call(
        self, method: str, raw: dict[str, Any], files: dict[str, FileRef] | None = None, notes: list[str] | None = None
    ) -> dict[str, Any]:
        """Validate and coerce the parameters of ``method``; return typed params.

        Raises :class:`ApiError` 400 (violation) for missing required parameters, values of a
        wrong type, unparsable JSON. Unknown parameters are dropped (as Telegram does) and
        reported in ``notes``.
        """
        files = files or {}
        notes = notes if notes is not None else []
        fields = self._method_fields[method]
        out: dict[str, Any] = {}
        attach_used: set[str] = set()
        for name, value in raw.items():
            if value is None:  # a JSON null is the same as an absent parameter
                continue
            f = fields.get(name)
            if f is None:
                if isinstance(value, FileRef) or name in attach_used:
                    continue
                notes.append(f"{method}: unknown parameter {name!r}")
                continue
            out[name] = self._coerce(value, f["types"], name, files, notes, top=True, attach_used=attach_used)
        for name, value in files.items():
            if name in fields and name not in out:
                out[name] = self._coerce(
                    value, fields[name]["types"], name, files, notes, top=True, attach_used=attach_used
                )
        for name, f in fields.items():
            if f["required"] and name not in out:
                if name == "text":
                    raise bad_request("message text is empty")
                if name == "chat_id":
                    raise bad_request("chat_id is empty")
                raise bad_request(f'parameter "{name}" is required')
        return out

    def _coerce(
        self,
        value: Any,
        types: list[str],
        path: str,
        files: dict[str, FileRef],
        notes: list[str],
        *,
        top: bool = False,
        attach_used: set[str] | None = None,
    ) -> Any:
        # a String-typed alternative must not swallow an object given as JSON text
        errors: list[ApiError] = []
        order = sorted(types, key=lambda t: (t == "String", t))
        for t in order:
            attempt_notes: list[str] = []
            try:
                result = self._coerce_one(value, t, path, files, attempt_notes, top, attach_used)
            except ApiError as e:
                errors.append(e)
                continue
            notes.extend(attempt_notes)
            return result
        # prefer the most specific error (the one from an object/array type)
        for t, e in zip(order, errors):
            if t not in _PRIMITIVES:
                raise e
        raise errors[0]

    def _coerce_one(
        self,
        value: Any,
        t: str,
        path: str,
        files: dict[str, FileRef],
        notes: list[str],
        top: bool,
        attach_used: set[str] | None,
    ) -> Any:
        if t == "Integer":
            if isinstance(value, bool):
                raise bad_request(f'field "{path}" must be of type Integer')
            if isinstance(value, int):
                return value
            if isinstance(value, str) and _INT_RE.match(value.strip()):
                return int(value)
            raise bad_request(f'field "{path}" must be of type Integer')
        if t == "Float":
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value)
            if isinstance(value, str) and _FLOAT_RE.match(value.strip()):
                return float(value)
            raise bad_request(f'field "{path}" must be of type Number')
        if t in ("Boolean", "True"):
            if isinstance(value, bool):
                result = value
            elif isinstance(value, int) and value in (0, 1):
                result = bool(value)
            elif isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
                result = value.lower() in ("true", "1")
            else:
                raise bad_request(f'field "{path}" must be of type Boolean')
            return result
        if t == "String":
            if isinstance(value, str):
                return value
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return str(value)  # Telegram accepts numbers where strings are expected
            raise bad_request(f'field "{path}" must be of type String')
        if t == "InputFile":
            if isinstance(value, FileRef):
                return value
            if isinstance(value, str) and value.startswith("attach://"):
                name = value[len("attach://") :]
                if name in files:
                    if attach_used is not None:
                        attach_used.add(name)
                    return files[name]
                raise bad_request(f"file attach://{name} not found in the request")
            raise bad_request(f'field "{path}" must be an uploaded file')
        if t.startswith("Array of "):
            inner = t[len("Array of ") :]
            if isinstance(value, str):
                value = self._loads(value, path)
            if not isinstance(value, list):
                raise bad_request(f'field "{path}" must be an Array')
            return [self._coerce(v, [inner], f"{path}[{k}]", files, notes) for k, v in enumerate(value)]
        # an object type
        if isinstance(value, str):
            value = self._loads(value, path)
        if not isinstance(value, dict):
            raise bad_request(f'field "{path}" must be an Object of type {t}')
        return self._coerce_object(value, t, path, files, notes)

    def _loads(self, text: str, path: str) -> Any:
        try:
            return json.loads(text)
        except ValueError:
            what = "reply keyboard markup" if path == "reply_markup" else path.replace("_", " ")
            raise bad_request(f"can't parse {what} JSON object") from None

    def _coerce_object(self, obj: dict, t: str, path: str, files: dict[str, FileRef], notes: list[str]) -> dict:
        if t in self._disc:
            key, mapping = self._disc[t]
            sub = mapping.get(str(obj.get(key)))
            if sub is None:
                raise bad_request(f'unsupported {t} {key} "{obj.get(key)}" in field "{path}"')
            t = sub
        if t not in self._fields:
            return obj
        fields = self._fields[t]
        out: dict[str, Any] = {}
        for name, value in obj.items():
            f = fields.get(name)
            if f is None:
                notes.append(f"{path}: unknown field {name!r} of {t}")
                continue
            out[name] = self._coerce(value, f["types"], f"{path}.{name}", files, notes)
        for name, f in fields.items():
            if f["required"] and name not in out:
                raise bad_request(f'can\'t parse {t}: field "{name}" is required in "{path}"')
        return out

    # --------------------------------------------------- checking our own output
    def check_object(self, type_name: str, obj: Any, path: str = "") -> list[str]:
        """Problems of an object *we* produce: missing required fields, unknown fields,
        wrong primitive types. Returns a list of messages (empty when it conforms)."""
        path = path or type_name
        problems: list[str] = []
        self._check(obj, [type_name], path, problems)
        return problems

    def _check(self, obj: Any, types: list[str], path: str, problems: list[str]) -> None:
        attempts = []
        for t in types:
            p: list[str] = []
            self._check_one(obj, t, path, p)
            if not p:
                return
            attempts.append(p)
        problems.extend(min(attempts, key=len))

    def _check_one(self, obj: Any, t: str, path: str, problems: list[str]) -> None:
        if t == "Integer":
            if not isinstance(obj, int) or isinstance(obj, bool):
                problems.append(f"{path}: expected Integer, got {obj!r}")
        elif t == "Float":
            if not isinstance(obj, (int, float)) or isinstance(obj, bool):
                problems.append(f"{path}: expected Float, got {obj!r}")
        elif t == "String":
            if not isinstance(obj, str):
                problems.append(f"{path}: expected String, got {obj!r}")
        elif t == "Boolean":
            if not isinstance(obj, bool):
                problems.append(f"{path}: expected Boolean, got {obj!r}")
        elif t == "True":
            if obj is not True:
                problems.append(f"{path}: expected True, got {obj!r}")
        elif t.startswith("Array of "):
            if not isinstance(obj, list):
                problems.append(f"{path}: expected Array, got {obj!r}")
                return
            for k, v in enumerate(obj):
                self._check(v, [t[len("Array of ") :]], f"{path}[{k}]", problems)
        elif t in self.types:
            if not isinstance(obj, dict):
                problems.append(f"{path}: expected {t}, got {obj!r}")
                return
            if t in self._disc:
                key, mapping = self._disc[t]
                sub = mapping.get(str(obj.get(key)))
                if sub is None:
                    problems.append(f"{path}: no subtype of {t} with {key}={obj.get(key)!r}")
                    return
                t = sub
            elif self.types[t].get("subtypes"):  # e.g. MaybeInaccessibleMessage
                self._check(obj, self.types[t]["subtypes"], path, problems)
                return
            fields = self._fields[t]
            for name, v in obj.items():
                if name not in fields:
                    problems.append(f"{path}: unknown field {name!r} of {t}")
                else:
                    self._check(v, fields[name]["types"], f"{path}.{name}", problems)
            for name, f in fields.items():
                if f["required"] and name not in obj:
                    problems.append(f"{path}: missing required field {name!r} of {t}")
        else:
            problems.append(f"{path}: unknown type {t}")
