"""Node configuration: a TOML file validated by a typed schema.

:func:`parse` and :func:`load` return an immutable :class:`NodeConfig` or raise
:class:`ConfigError`, which carries one ``key.path: reason`` line per problem.
"""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from ovn_frr.config.checks import check, check_parts
from ovn_frr.config.schema import (
    AgentConfig,
    BfdConfig,
    BfdProfile,
    BgpConfig,
    FrrConfig,
    ImportConfig,
    Neighbor,
    NodeConfig,
    OvnConfig,
    PrefixFilter,
)
from ovn_frr.config.types import parse_secret

__all__ = [
    "AgentConfig",
    "BfdConfig",
    "BfdProfile",
    "BgpConfig",
    "ConfigError",
    "FrrConfig",
    "ImportConfig",
    "Neighbor",
    "NodeConfig",
    "OvnConfig",
    "PrefixFilter",
    "load",
    "parse",
]


class ConfigError(Exception):
    """The config is unusable; ``problems`` has one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def load(path: str | Path) -> NodeConfig:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError([f"{p}: cannot read: {exc.strerror}"]) from None
    except UnicodeDecodeError:
        raise ConfigError([f"{p}: not UTF-8 text"]) from None
    return parse(text, source=str(p), base=p.parent)


def parse(text: str, source: str = "<config>", base: Path | None = None) -> NodeConfig:
    """``base``: the directory relative ``password_file`` paths start from (default: the
    current directory)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{source}: TOML syntax error: {exc}"]) from None
    try:
        cfg = NodeConfig.model_validate(data)
    except ValidationError as exc:
        # every problem in one run: the cross-key rules too, on the parts that did validate
        problems = [_describe(err) for err in exc.errors()]
        problems += [f"{path}: {reason}" for path, reason in check_parts(data)]
        raise ConfigError(list(dict.fromkeys(problems))) from None
    problems = [f"{path}: {reason}" for path, reason in check(cfg)]
    cfg, secret_problems = _read_passwords(cfg, base or Path("."))
    problems += secret_problems
    if problems:
        raise ConfigError(problems)
    return cfg


def _read_passwords(cfg: NodeConfig, base: Path) -> tuple[NodeConfig, list[str]]:
    """Each ``password_file`` read into its neighbor's ``password`` (one trailing newline, as
    ``echo`` writes, is not part of it)."""
    problems = []
    neighbors = list(cfg.bgp.neighbors)
    for i, nb in enumerate(neighbors):
        if nb.password_file is None:
            continue
        key = f"bgp.neighbors[{i}].password_file"
        path = base / nb.password_file
        try:
            secret = path.read_text(encoding="utf-8")
        except OSError as exc:
            problems.append(f"{key}: cannot read {str(path)!r}: {exc.strerror}")
            continue
        except UnicodeDecodeError:
            problems.append(f"{key}: {str(path)!r} is not UTF-8 text")
            continue
        secret = secret.removesuffix("\n").removesuffix("\r")
        try:
            parse_secret(secret)
        except ValueError as exc:
            problems.append(f"{key}: the password in {str(path)!r} {exc}")
            continue
        neighbors[i] = nb.model_copy(update={"password": secret})
    bgp = cfg.bgp.model_copy(update={"neighbors": tuple(neighbors)})
    return cfg.model_copy(update={"bgp": bgp}), problems


def _path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part == "[key]":
            continue
        else:
            out += f".{part}" if out else part
    return out or "(top level)"


def _model_at(loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The model class that owns the last key of ``loc`` (for typo suggestions)."""
    model: type[BaseModel] | None = NodeConfig
    skip_key = False
    for part in loc[:-1]:
        if isinstance(part, int) or skip_key:
            skip_key = False
            continue
        fields = {f.alias or n: f for n, f in model.model_fields.items()} if model else {}
        if part not in fields:
            return None
        ann = fields[part].annotation
        # a table of tables (bfd.profiles.NAME): the next part is a key, not a field
        skip_key = getattr(ann, "__origin__", None) is dict
        model = _first_model(ann)
    return model


def _first_model(ann: Any) -> type[BaseModel] | None:
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ann
    for arg in getattr(ann, "__args__", ()):
        found = _first_model(arg)
        if found is not None:
            return found
    return None


_TYPE_NAMES = {
    "int_type": "an integer",
    "string_type": "a string",
    "bool_type": "true or false",
    "dict_type": "a table",
    "model_type": "a table",
    "tuple_type": "an array",
    "list_type": "an array",
    "float_type": "a number",
}


def _describe(err: ErrorDetails) -> str:
    loc = tuple(err["loc"])
    path = _path(loc)
    kind = err["type"]
    value = err.get("input")
    ctx = err.get("ctx", {})
    if kind == "ovn_frr":
        reason = str(ctx["reason"])
    elif kind == "missing":
        reason = "required key is missing"
    elif kind == "extra_forbidden":
        reason = "unknown key"
        model = _model_at(loc)
        if model is not None:
            names = [f.alias or n for n, f in model.model_fields.items()]
            close = difflib.get_close_matches(str(loc[-1]), names, n=1)
            if close:
                reason += f" (did you mean {close[0]!r}?)"
    elif kind in _TYPE_NAMES:
        # a table or array is named, not echoed: it may hold a password
        if isinstance(value, dict):
            got = "a table"
        elif isinstance(value, list):
            got = "an array"
        else:
            got = repr(value)
        reason = f"expected {_TYPE_NAMES[kind]}, got {got}"
    elif kind in ("greater_than_equal", "greater_than"):
        reason = f"{value!r} is too small (minimum {ctx.get('ge', ctx.get('gt'))})"
    elif kind in ("less_than_equal", "less_than"):
        reason = f"{value!r} is too large (maximum {ctx.get('le', ctx.get('lt'))})"
    elif kind == "literal_error":
        reason = f"{value!r} is not one of {ctx.get('expected')}"
    elif kind == "string_too_short":
        reason = "must not be empty"
    elif kind == "string_too_long":
        reason = f"{value!r} is longer than {ctx.get('max_length')} characters"
    elif kind == "string_pattern_mismatch":
        reason = f"{value!r} is not a valid name (letters, digits, '_', '.', '-')"
    else:
        reason = err["msg"]
    return f"{path}: {reason}"
