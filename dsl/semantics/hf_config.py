"""A Hugging Face model's config.json as a module of one record.

`use "path/config.json" as m` reads the file as untrusted input (a regular
file named .json, bounded, UTF-8, plain JSON: no object hooks, no NaN or
Infinity) and makes the text of an .ifr module from it: each field ifr reads,
under the name the config gives it, and the derived fields of the standard
library's model records (`params`, `active_params`, `kv_bytes_per_token`, ...)
as formulas over them, so `explain` and the workbook show how each is
computed.  The loader parses that text like any module's; the `use` names the
module's one record.  Every mistake in the file is an IfrError on the `use`
line that names the field.

Nothing in the file reaches the module's text but numbers this module
formats itself and names from its own lists.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from ifr.errors import IfrError, Span

# A config.json is a few kilobytes; one with a tokenizer's table in it is still far below this.
MAX_CONFIG_BYTES = 1024 * 1024
# A count above this is not a model's shape, and would not be exact as a float.
MAX_COUNT = 10**15

# torch_dtype -> bytes per parameter (and per cached K/V element).
DTYPE_BYTES = {"float64": 8, "double": 8, "float32": 4, "float": 4, "float16": 2, "half": 2, "bfloat16": 2,
               "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1, "int8": 1,
               "uint8": 1}

# Where each kind of model keeps its routed experts' count (DeepSeek, Qwen-MoE, Mixtral).
EXPERT_KEYS = ("n_routed_experts", "num_experts", "num_local_experts")

# Fields whose value changes the parameter count in a way these formulas do not follow.
UNSUPPORTED = {
    "shared_expert_intermediate_size": lambda v: v not in (None, 0),
    "mlp_only_layers": lambda v: v not in (None, []),
    "decoder_sparse_step": lambda v: v not in (None, 1),
    "moe_layer_freq": lambda v: v not in (None, 1),
}


# Models whose MLP is two matrices (up, down) or whose blocks differ from a Llama-style decoder's:
# the counts here (a gated MLP of three matrices, RMSNorm, no biases) would be wrong for them.
UNSUPPORTED_MODEL_TYPES = ("gpt2", "gpt_neox", "gptj", "gpt_bigcode", "opt", "bloom", "falcon", "phi", "mpt",
                           "starcoder2", "dbrx", "t5", "bert", "mamba", "jamba", "rwkv")


def read_config(path: Path, span: Span | None) -> str:
    """The text of a config.json: a regular file named .json (the name of what its
    links lead to) of at most MAX_CONFIG_BYTES, in UTF-8."""
    import os
    import stat
    try:
        real = Path(os.path.realpath(path))
    except ValueError:
        raise IfrError("unreadable", f"cannot read {path}: a file's name cannot hold a NUL character", span) from None
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(real, flags)
    except FileNotFoundError:
        raise IfrError("no-such-file", f"no such file: {path}", span, hint="the path is relative to the file "
                       "that uses it") from None
    except OSError as exc:
        raise IfrError("unreadable", f"cannot read {path}: {exc.strerror}", span) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise IfrError("unreadable", f"{path} is not a regular file", span, hint="give the path of a config.json")
        if real.suffix != ".json":
            raise IfrError("unreadable", f"{path} is not a .json file (a link to {real})", span,
                           hint="a model's config is read from a file named .json")
        if st.st_size > MAX_CONFIG_BYTES:
            raise IfrError("too-large", f"{path} has {st.st_size:,} bytes; a config.json may have at most "
                           f"{MAX_CONFIG_BYTES:,}", span)
        with os.fdopen(fd, "rb") as f:
            fd = None
            data = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise IfrError("unreadable", f"cannot read {path}: {exc.strerror}", span) from None
    finally:
        if fd is not None:
            os.close(fd)
    if len(data) > MAX_CONFIG_BYTES:
        raise IfrError("too-large", f"{path} has more than {MAX_CONFIG_BYTES:,} bytes", span)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IfrError("encoding", f"{path} is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset "
                       f"{exc.start})", span, hint="save the file as UTF-8") from None


def parse_config(text: str, name: str, span: Span | None) -> dict:
    """The JSON object of a config's text; anything else is a `bad-config` error."""
    def refuse(word: str):
        raise ValueError(f"{word} is not a number JSON allows")

    def finite(digits: str) -> float:
        value = float(digits)
        if not math.isfinite(value):
            raise ValueError(f"{digits} is too large a number")
        return value

    try:
        config = json.loads(text, parse_constant=refuse, parse_float=finite)
    except RecursionError:
        raise IfrError("bad-config", f"{name} nests its objects too deeply", span,
                       hint="a config.json is one JSON object, as the model hub serves it") from None
    except ValueError as exc:   # json.JSONDecodeError, NaN/Infinity, an integer of too many digits
        where = f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise IfrError("bad-config", f"{name} is not valid JSON{where}: {getattr(exc, 'msg', exc)}", span,
                       hint="a config.json is one JSON object, as the model hub serves it") from None
    if not isinstance(config, dict):
        raise IfrError("bad-config", f"{name} holds a JSON {type(config).__name__}, not an object", span,
                       hint="a config.json is one JSON object of fields such as num_hidden_layers")
    return config


@dataclass
class _Lines:
    """The module's text, each field's cell at the place of its key in the config where it can be
    (so a definition's place is the config's own key), the derived ones after."""
    positions: dict[str, tuple[int, int]]
    lines: dict[int, str] = field(default_factory=dict)
    last: int = 0

    def add(self, name: str, value_text: str, note: str, key: str | None = None) -> None:
        line, column = self.positions.get(key, (0, 1)) if key is not None else (0, 1)
        if line <= self.last:
            line, column = self.last + 1, 1
        self.lines[line] = " " * (column - 1) + f"{name} = {value_text}    # {note}"
        self.last = line

    def text(self) -> str:
        return "".join(self.lines.get(i, "") + "\n" for i in range(1, self.last + 1))


def key_places(text: str) -> dict[str, tuple[int, int]]:
    """The line and column of each key written once in the text (a key also inside a nested
    object is left out), where its name starts inside the quotes."""
    found: dict[str, list[tuple[int, int]]] = {}
    for match in re.finditer(r'"([A-Za-z_][A-Za-z0-9_]*)"\s*:', text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        found.setdefault(match.group(1), []).append((text.count("\n", 0, match.start()) + 1,
                                                     match.start(1) - line_start + 1))
    return {k: v[0] for k, v in found.items() if len(v) == 1}


class _Config:
    """The fields of one config, checked as they are read."""

    def __init__(self, config: dict, name: str, span: Span | None):
        self.config, self.name, self.span = config, name, span

    def error(self, code: str, message: str, hint: str | None = None) -> IfrError:
        return IfrError(code, f"{self.name}: {message}", self.span, hint=hint)

    def count(self, key: str, required: bool = True, least: int = 1) -> int | None:
        """A whole number field (``least`` or more); None when absent or null and not required."""
        value = self.config.get(key)
        if value is None:
            if not required:
                return None
            hint = None
            if "text_config" in self.config:
                hint = "this config keeps the language model's fields under `text_config`: " \
                       "write that object to a config.json of its own"
            raise self.error("missing-field", f"the config has no `{key}`, which ifr needs", hint=hint or
                             f"add \"{key}\": a whole number, as the model's published config.json gives it")
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error("bad-field", f"`{key}` is {json.dumps(value)[:40]}, not a whole number",
                             hint=f"\"{key}\" is a count such as 32")
        if value < least or value > MAX_COUNT:
            bound = f"at least {least}" if value < least else f"at most {MAX_COUNT:.0e}"
            raise self.error("bad-field", f"`{key}` is {value}; it must be {bound}",
                             hint=f"\"{key}\" as the model's published config.json gives it")
        return value

    def flag(self, key: str, hint: str) -> bool:
        value = self.config.get(key)
        if value is None:
            raise self.error("missing-field", f"the config has no `{key}`, which the parameter count needs",
                             hint=hint)
        if not isinstance(value, bool):
            raise self.error("bad-field", f"`{key}` is {json.dumps(value)[:40]}, not true or false", hint=hint)
        return value

    def dtype(self) -> tuple[str, str, int]:
        """(the key, the dtype's name, its bytes): `torch_dtype`, or `dtype` as newer configs write it."""
        key = "torch_dtype" if "torch_dtype" in self.config or "dtype" not in self.config else "dtype"
        value = self.config.get(key)
        if value is None:
            raise self.error("missing-field", "the config has no `torch_dtype`, which the byte counts need",
                             hint="add \"torch_dtype\": \"bfloat16\" (or the dtype the weights are stored in)")
        if not isinstance(value, str) or value.removeprefix("torch.") not in DTYPE_BYTES:
            raise self.error("bad-field", f"`{key}` is {json.dumps(value)[:40]}, a dtype ifr does not know",
                             hint="one of " + ", ".join(DTYPE_BYTES))
        dtype = value.removeprefix("torch.")
        return key, dtype, DTYPE_BYTES[dtype]


def module_text(text: str, name: str, span: Span | None) -> str:
    """The .ifr text of the module a config.json's ``text`` makes (errors name ``name``, at ``span``)."""
    cfg = _Config(parse_config(text, name, span), name, span)
    out = _Lines(key_places(text))
    for key, unsupported in UNSUPPORTED.items():
        if unsupported(cfg.config.get(key)):
            raise cfg.error("unsupported-field", f"`{key}` is {json.dumps(cfg.config[key])[:40]}, which ifr's "
                            "parameter count does not follow", hint="the derived counts would be wrong: "
                            "write the model's record by hand (see the standard library's llm module)")
    model_type = cfg.config.get("model_type")
    if model_type in UNSUPPORTED_MODEL_TYPES:
        raise cfg.error("unsupported-field", f"`model_type` is {json.dumps(model_type)}, whose layers ifr's "
                        "parameter count does not follow (it counts a Llama-style decoder: a gated MLP of three "
                        "matrices, no biases)", hint="write the model's record by hand (see the standard library's "
                        "llm module)")
    raw = _raw_fields(cfg)
    dtype = raw.pop("_dtype")
    for key, value in sorted(raw.items(), key=lambda kv: out.positions.get(kv[0], (1 << 30, 0))):
        out.add(key, _number(value), f"config.json {key}", key)
    for name_, formula, note in _derived(raw, dtype):
        out.add(name_, formula, note)
    return out.text()


def _number(value) -> str:
    return str(int(value)) if isinstance(value, bool) or isinstance(value, int) else repr(value)


def _raw_fields(cfg: _Config) -> dict:
    """The config's fields ifr reads, checked: name -> a whole number (tie_word_embeddings 0 or 1)."""
    raw = {k: cfg.count(k) for k in ("num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size",
                                     "intermediate_size")}
    for key in ("num_key_value_heads", "head_dim", "max_position_embeddings"):
        raw[key] = cfg.count(key, required=False)
    raw["tie_word_embeddings"] = int(cfg.flag(
        "tie_word_embeddings", "the parameter count depends on it: add \"tie_word_embeddings\": false "
        "(the output head is a matrix of its own) or true (it is the embedding)"))
    experts = {k: cfg.count(k, required=False, least=0) for k in EXPERT_KEYS}
    given = {k: v for k, v in experts.items() if v}
    if len(set(given.values())) > 1:
        raise cfg.error("bad-field", "the config gives two numbers of experts: " +
                        ", ".join(f"`{k}` = {v}" for k, v in given.items()), hint="keep one of them")
    if given:
        raw.update(given)
        raw["num_experts_per_tok"] = cfg.count("num_experts_per_tok")
        for key in ("moe_intermediate_size", "n_shared_experts", "first_k_dense_replace"):
            raw[key] = cfg.count(key, required=False, least=0 if key != "moe_intermediate_size" else 1)
        experts_n = next(iter(given.values()))
        if raw["num_experts_per_tok"] > experts_n:
            raise cfg.error("bad-field", f"`num_experts_per_tok` is {raw['num_experts_per_tok']}, more than the "
                            f"{experts_n} experts", hint="a token is routed to some of the experts, at most all")
        if (raw["first_k_dense_replace"] or 0) > raw["num_hidden_layers"]:
            raise cfg.error("bad-field", f"`first_k_dense_replace` is {raw['first_k_dense_replace']}, more than "
                            f"the {raw['num_hidden_layers']} layers", hint="it counts the first layers, "
                            "whose MLP is dense")
    if cfg.config.get("kv_lora_rank") is not None:   # multi-head latent attention
        raw["kv_lora_rank"] = cfg.count("kv_lora_rank")
        for key in ("qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"):
            raw[key] = cfg.count(key)
        raw["q_lora_rank"] = cfg.count("q_lora_rank", required=False)
    elif raw["head_dim"] is None and raw["hidden_size"] % raw["num_attention_heads"]:
        raise cfg.error("missing-field", "the config has no `head_dim`, and hidden_size "
                        f"{raw['hidden_size']} is not a multiple of num_attention_heads {raw['num_attention_heads']}",
                        hint="add \"head_dim\": the width of one attention head")
    raw["_dtype"] = cfg.dtype()
    return {k: v for k, v in raw.items() if v is not None}


def _derived(raw: dict, dtype_of: tuple[str, str, int]) -> list[tuple[str, str, str]]:
    """(name, formula, what it is) of each derived field, in an order where each reads only those before."""
    dtype_key, dtype, size = dtype_of
    mla = "kv_lora_rank" in raw
    experts = next((k for k in EXPERT_KEYS if k in raw), None)
    out = []
    if "num_key_value_heads" not in raw:
        out.append(("num_key_value_heads", "num_attention_heads",
                    "the config has no num_key_value_heads: one K/V head per query head"))
    if "head_dim" not in raw:
        out.append(("head_dim", "v_head_dim", "MLA: the width of a value head (qk_nope_head_dim + qk_rope_head_dim "
                    "for a query/key head)") if mla else
                   ("head_dim", "hidden_size / num_attention_heads", "the config has no head_dim"))
    out += [
        ("bytes_per_param", f"{size} B", f"config.json {dtype_key} {dtype}"),
        ("embedding_params", "vocab_size * hidden_size", "the token embedding"),
        ("output_params", "(1 - tie_word_embeddings) * vocab_size * hidden_size",
         "the output head: none when tied to the embedding"),
        ("attention_params", _attention(raw),
         "per layer: MLA projections (q, compressed kv, o) and their norms" if mla else
         "per layer: q, k, v and o projections (GQA), biases not counted"),
        ("norm_params", "2 * hidden_size", "per layer: the two RMSNorm weights"),
        ("mlp_params", "3 * hidden_size * intermediate_size", "per dense layer: gate, up and down projections"),
    ]
    layers = "num_hidden_layers * (attention_params + norm_params)"
    common = "embedding_params + output_params + hidden_size + " + layers
    if experts is None:
        out += [("params", f"{common} + num_hidden_layers * mlp_params",
                 "embedding, output head, final norm, and every layer's attention, norms and MLP"),
                ("active_params", "params", "a dense model uses every parameter for each token")]
    else:
        width = "moe_intermediate_size" if "moe_intermediate_size" in raw else "intermediate_size"
        dense = "first_k_dense_replace" if "first_k_dense_replace" in raw else "0"
        shared = " + n_shared_experts" if "n_shared_experts" in raw else ""
        out += [
            ("expert_params", f"3 * hidden_size * {width}", "per expert: gate, up and down projections"),
            ("router_params", f"hidden_size * {experts}", "per MoE layer: the router's weights"),
            ("moe_layers", f"num_hidden_layers - {dense}", "layers whose MLP is experts"),
            ("params", f"{common} + {dense} * mlp_params + moe_layers * (({experts}{shared}) * expert_params"
                       " + router_params)", "every layer's attention and norms, the dense layers' MLP, "
                       "every expert (routed and shared) and router, embedding, output head, final norm"),
            ("active_params", f"{common} + {dense} * mlp_params + moe_layers * ((num_experts_per_tok{shared}) "
                              "* expert_params + router_params)",
             "params with num_experts_per_tok routed experts in place of all of them"),
        ]
    out.append(("weight_bytes", "params * bytes_per_param", "every parameter at the config's dtype"))
    if mla:
        out.append(("kv_bytes_per_token", "(kv_lora_rank + qk_rope_head_dim) * num_hidden_layers * "
                    "bytes_per_param / token", "MLA caches the latent and the RoPE key of every layer"))
    else:
        out.append(("kv_bytes_per_token", "2 * num_key_value_heads * head_dim * num_hidden_layers * "
                    "bytes_per_param / token", "K and V of every KV head of every layer"))
    out += _stdlib_names(raw, experts, mla)
    return out


def _attention(raw: dict) -> str:
    if "kv_lora_rank" not in raw:
        return "hidden_size * head_dim * 2 * (num_attention_heads + num_key_value_heads)"
    qk = "num_attention_heads * (qk_nope_head_dim + qk_rope_head_dim)"
    query = (f"hidden_size * q_lora_rank + q_lora_rank + q_lora_rank * {qk}" if "q_lora_rank" in raw
             else f"hidden_size * {qk}")
    return (f"{query} + hidden_size * (kv_lora_rank + qk_rope_head_dim) + kv_lora_rank + "
            "kv_lora_rank * num_attention_heads * (qk_nope_head_dim + v_head_dim) + "
            "num_attention_heads * v_head_dim * hidden_size")


# The standard library's llm records' names for the same fields (so a config and a record are interchangeable).
STDLIB_NAMES = [("layers", "num_hidden_layers"), ("hidden", "hidden_size"), ("heads", "num_attention_heads"),
                ("kv_heads", "num_key_value_heads"), ("ffn", "intermediate_size"), ("vocab", "vocab_size"),
                ("max_context", "max_position_embeddings"), ("topk", "num_experts_per_tok"),
                ("shared_experts", "n_shared_experts"), ("dense_layers", "first_k_dense_replace"),
                ("rope_head_dim", "qk_rope_head_dim"), ("nope_head_dim", "qk_nope_head_dim")]


def _stdlib_names(raw: dict, experts: str | None, mla: bool) -> list[tuple[str, str, str]]:
    out = [(short, key, f"the standard library's name for {key}") for short, key in STDLIB_NAMES
           if key in raw or key == "num_key_value_heads"]
    if experts is not None:
        out.append(("experts", experts, f"the standard library's name for {experts}"))
        width = "moe_intermediate_size" if "moe_intermediate_size" in raw else "intermediate_size"
        out.append(("moe_ffn", width, f"the standard library's name for {width}"))
        if "n_shared_experts" not in raw:
            out.append(("shared_experts", "0", "the config has no n_shared_experts"))
    return out

