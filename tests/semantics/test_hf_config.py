"""`use "config.json" as m`: a Hugging Face config read into a record.

The three configs are written here with the published shapes of Llama-3-8B
(dense, GQA), Mixtral-8x7B (MoE) and DeepSeek-V3 (MoE with MLA).  Each
derived count is checked twice: against an independent count, made here by
listing every weight matrix of the model as its Hugging Face implementation
names them (``_weights``), and against the parameter counts the models'
publishers state, within what the published figure's own rounding allows.
"""
from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
from workbooks import cell_places, recalculated

import ifr
from ifr.errors import IfrError, IfrErrors

LLAMA3_8B = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 14336, "max_position_embeddings": 8192, "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
    "tie_word_embeddings": False, "torch_dtype": "bfloat16", "vocab_size": 128256,
}
MIXTRAL_8X7B = {
    "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": 4096,
    "intermediate_size": 14336, "max_position_embeddings": 32768, "num_attention_heads": 32,
    "num_experts_per_tok": 2, "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 8,
    "rope_theta": 1000000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16", "vocab_size": 32000,
}
# Qwen/Qwen3-30B-A3B: experts as `num_experts`, no shared expert, head_dim given.
QWEN3_30B_A3B = {
    "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "decoder_sparse_step": 1,
    "head_dim": 128, "hidden_size": 2048, "intermediate_size": 6144, "max_position_embeddings": 40960,
    "mlp_only_layers": [], "moe_intermediate_size": 768, "num_attention_heads": 32, "num_experts": 128,
    "num_experts_per_tok": 8, "num_hidden_layers": 48, "num_key_value_heads": 4, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "vocab_size": 151936,
}
DEEPSEEK_V3 = {
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "first_k_dense_replace": 3,
    "hidden_size": 7168, "intermediate_size": 18432, "kv_lora_rank": 512, "max_position_embeddings": 163840,
    "moe_intermediate_size": 2048, "moe_layer_freq": 1, "n_group": 8, "n_routed_experts": 256,
    "n_shared_experts": 1, "num_attention_heads": 128, "num_experts_per_tok": 8, "num_hidden_layers": 61,
    "num_key_value_heads": 128, "num_nextn_predict_layers": 1, "q_lora_rank": 1536, "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64, "tie_word_embeddings": False, "topk_group": 4, "torch_dtype": "bfloat16",
    "v_head_dim": 128, "vocab_size": 129280,
    "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
                            "weight_block_size": [128, 128]},
}


def _weights(c: dict) -> tuple[int, int]:
    """(total, active per token) parameters, summed over every weight tensor of the model's
    Hugging Face modules (embed_tokens, per layer q/k/v/o or MLA's q_a/q_b/kv_a/kv_b/o and
    their norms, the MLP or the experts and the router, the final norm and lm_head)."""
    h, layers = c["hidden_size"], c["num_hidden_layers"]
    heads = c["num_attention_heads"]
    attention = []
    if "kv_lora_rank" in c:
        qk = c["qk_nope_head_dim"] + c["qk_rope_head_dim"]
        attention += [(h, c["q_lora_rank"]), (c["q_lora_rank"],), (c["q_lora_rank"], heads * qk),
                      (h, c["kv_lora_rank"] + c["qk_rope_head_dim"]), (c["kv_lora_rank"],),
                      (c["kv_lora_rank"], heads * (c["qk_nope_head_dim"] + c["v_head_dim"])),
                      (heads * c["v_head_dim"], h)]
    else:
        d, kv = c.get("head_dim", h // heads), c["num_key_value_heads"]
        attention += [(h, heads * d), (h, kv * d), (h, kv * d), (heads * d, h)]
    norms = [(h,), (h,)]

    def size(tensors):
        total = 0
        for shape in tensors:
            n = 1
            for s in shape:
                n *= s
            total += n
        return total

    def mlp(width):
        return size([(h, width), (h, width), (width, h)])   # gate_proj, up_proj, down_proj

    experts = c.get("n_routed_experts") or c.get("num_experts") or c.get("num_local_experts") or 0
    dense = c.get("first_k_dense_replace", 0) if experts else layers
    total = active = size([(c["vocab_size"], h), (h,)]) + (0 if c["tie_word_embeddings"] else c["vocab_size"] * h)
    for layer in range(layers):
        base = size(attention) + size(norms)
        if layer < dense:
            total += base + mlp(c["intermediate_size"])
            active += base + mlp(c["intermediate_size"])
            continue
        width = c.get("moe_intermediate_size", c["intermediate_size"])
        shared = c.get("n_shared_experts", 0)
        router = size([(experts, h)])
        total += base + (experts + shared) * mlp(width) + router
        active += base + (c["num_experts_per_tok"] + shared) * mlp(width) + router
    return total, active


def _use(tmp_path: Path, config, body: str = "", name: str = "config.json"):
    (tmp_path / name).write_text(json.dumps(config, indent=2) if not isinstance(config, str) else config,
                                 encoding="utf-8")
    path = tmp_path / "plan.ifr"
    path.write_text(f'use "{name}" as m\n' + textwrap.dedent(body), encoding="utf-8")
    return path


def _values(tmp_path: Path, config) -> dict:
    names = ("params", "active_params", "kv_bytes_per_token", "embedding_params", "weight_bytes")
    model = ifr.load(_use(tmp_path, config, "".join(f"{n} = m.{n}\n" for n in names)))
    return {name: model[name] for name in names}


@pytest.mark.parametrize("config, total, active, tolerance", [
    # Meta's Llama 3 model card: 8.03B (8B in its title); the safetensors hold 8,030,261,248.
    (LLAMA3_8B, 8.03e9, 8.03e9, 0.005e9),
    # Mistral AI's Mixtral announcement: 46.7B total, 12.9B used per token (embedding and head included).
    (MIXTRAL_8X7B, 46.7e9, 12.9e9, 0.05e9),
    # Qwen3's model card: 30.5B total, 3.3B activated (its q/k norms, 12,288 weights, are not counted).
    # Counted here: 30.53e9 and 3.353e9; the card's 3.3B is not 3.35 rounded (1.6% below it), so this one
    # is held to 0.06e9, not to half a unit of its last digit.
    (QWEN3_30B_A3B, 30.5e9, 3.3e9, 0.06e9),
], ids=["llama3_8b", "mixtral_8x7b", "qwen3_30b_a3b"])
def test_derived_counts_are_the_published_ones(tmp_path, config, total, active, tolerance):
    """Within half a unit of the published figure's last digit (the figure as written), but Qwen3's."""
    values = _values(tmp_path, config)
    assert (values["params"].m, values["active_params"].m) == _weights(config)
    assert abs(values["params"].m - total) <= tolerance
    assert abs(values["active_params"].m - active) <= tolerance


def test_deepseek_v3_counts_and_mla_cache(tmp_path):
    values = _values(tmp_path, DEEPSEEK_V3)
    total, active = _weights(DEEPSEEK_V3)
    assert (values["params"].m, values["active_params"].m) == (total, active)
    # The technical report: 671B total, the 14B multi-token-prediction module not counted (nor is it here).
    assert abs(values["params"].m - 671e9) <= 0.5e9
    # "37B activated": the report does not say whether the input embedding (a lookup, 0.93e9 here) is
    # counted.  Counted, as active_params does (Mixtral's 12.9B counts it), 37.55e9: within 2%; not
    # counted, 36.63e9: within half a unit of the figure as written.
    assert abs(values["active_params"].m - 37e9) <= 0.02 * 37e9
    assert abs(values["active_params"].m - values["embedding_params"].m - 37e9) <= 0.5e9
    # MLA's cache: (kv_lora_rank + qk_rope_head_dim) x layers x 2 bytes = 70,272 B = 68.625 KiB a token.
    assert values["kv_bytes_per_token"].to("B/token").m == (512 + 64) * 61 * 2
    assert values["weight_bytes"].to("B").m == 2 * total


def test_gqa_cache_and_bytes_at_the_configs_dtype(tmp_path):
    values = _values(tmp_path, LLAMA3_8B)
    assert values["kv_bytes_per_token"].to("KiB/token").m == 128   # 2 x 8 heads x 128 x 32 layers x 2 B
    f32 = _values(tmp_path, {**LLAMA3_8B, "torch_dtype": "float32"})
    assert f32["kv_bytes_per_token"].to("KiB/token").m == 256
    assert f32["weight_bytes"].to("B").m == 4 * 8_030_261_248


def test_a_tied_head_is_counted_once(tmp_path):
    tied = _values(tmp_path, {**LLAMA3_8B, "tie_word_embeddings": True})
    assert tied["params"].m == _weights({**LLAMA3_8B, "tie_word_embeddings": True})[0]
    assert tied["params"].m == 8_030_261_248 - 128256 * 4096


def test_the_fields_read_as_named_in_the_config_and_by_the_standard_librarys_names(tmp_path):
    model = ifr.load(_use(tmp_path, DEEPSEEK_V3, """\
        a = m.num_hidden_layers * m.kv_lora_rank + m.layers
        b = m.n_routed_experts + m.experts + m.topk + m.first_k_dense_replace + m.dense_layers
        """))
    assert model["a"].m == 61 * 512 + 61
    assert model["b"].m == 256 + 256 + 8 + 3 + 3


def test_a_config_is_a_record_a_table_can_vary(tmp_path):
    (tmp_path / "mixtral.json").write_text(json.dumps(MIXTRAL_8X7B), encoding="utf-8")
    path = _use(tmp_path, LLAMA3_8B, """\
        use "mixtral.json" as mix
        model = m
        weights = model.weight_bytes in GB
        table t: vary model over [m, mix] show weights
        check t[mix].weights = 2 * 46_702_792_704 B
        """)
    model = ifr.load(path)
    assert all(r.passed for r in model.check())


def test_the_config_is_read_again_when_it_changes(tmp_path):
    """No cache keeps an old config: the module's text is made from the file on each analysis."""
    path = _use(tmp_path, LLAMA3_8B, "layers = m.num_hidden_layers\n")
    assert ifr.load(path)["layers"].m == 32
    (tmp_path / "config.json").write_text(json.dumps({**LLAMA3_8B, "num_hidden_layers": 40}), encoding="utf-8")
    assert ifr.load(path)["layers"].m == 40


def test_the_editor_reads_the_config_and_counts_it_among_the_files_read(tmp_path):
    from ifr.lsp.analysis import analyse
    path = _use(tmp_path, LLAMA3_8B, "layers = m.num_hidden_layers\n")
    result = analyse(str(path), path.read_text(encoding="utf-8"), {})
    assert str((tmp_path / "config.json").resolve()) in result.files
    assert not [d for d in result.diagnostics if d.severity == "error"]
    # an unsaved buffer of the config is read before the disk
    buffers = {str(tmp_path / "config.json"): json.dumps({**LLAMA3_8B, "num_hidden_layers": 12})}
    result = analyse(str(path), path.read_text(encoding="utf-8"), buffers)
    assert [c.value for c in result.cells.values() if c.name == "layers"] == [12.0]


def _error(tmp_path, config, body: str = "") -> IfrError:
    try:
        ifr.load(_use(tmp_path, config, body))
    except IfrErrors as e:
        return e.errors[0]
    except IfrError as e:
        return e
    raise AssertionError("no error")


@pytest.mark.parametrize("config, code, words", [
    ({k: v for k, v in LLAMA3_8B.items() if k != "num_hidden_layers"}, "missing-field", "`num_hidden_layers`"),
    ({k: v for k, v in LLAMA3_8B.items() if k != "tie_word_embeddings"}, "missing-field", "`tie_word_embeddings`"),
    ({k: v for k, v in LLAMA3_8B.items() if k != "torch_dtype"}, "missing-field", "`torch_dtype`"),
    ({**LLAMA3_8B, "hidden_size": "4096"}, "bad-field", "`hidden_size`"),
    ({**LLAMA3_8B, "hidden_size": 4096.5}, "bad-field", "`hidden_size`"),
    ({**LLAMA3_8B, "num_hidden_layers": True}, "bad-field", "`num_hidden_layers`"),
    ({**LLAMA3_8B, "num_hidden_layers": 0}, "bad-field", "at least 1"),
    ({**LLAMA3_8B, "torch_dtype": "bfloat17"}, "bad-field", "`torch_dtype`"),
    ({**MIXTRAL_8X7B, "num_experts_per_tok": 9}, "bad-field", "`num_experts_per_tok`"),
    ({k: v for k, v in MIXTRAL_8X7B.items() if k != "num_experts_per_tok"}, "missing-field", "`num_experts_per_tok`"),
    ({**MIXTRAL_8X7B, "num_experts": 16}, "bad-field", "two numbers of experts"),
    ({**DEEPSEEK_V3, "qk_rope_head_dim": None}, "missing-field", "`qk_rope_head_dim`"),
    ({**DEEPSEEK_V3, "moe_layer_freq": 2}, "unsupported-field", "`moe_layer_freq`"),
    ({**LLAMA3_8B, "model_type": "gpt_neox"}, "unsupported-field", "`model_type`"),
    ({**LLAMA3_8B, "rope_theta": float("nan")}, "bad-config", "NaN"),
    ('{"hidden_size": 1e999}', "bad-config", "too large"),
    ('{"hidden_size": ' + "9" * 5000 + "}", "bad-config", "not valid JSON"),
    ("[1, 2]", "bad-config", "not an object"),
    ("{", "bad-config", "line 1, column 2"),
    ("[" * 100_000, "bad-config", ""),
])
def test_a_mistake_in_the_config_names_the_field_on_the_use_line(tmp_path, config, code, words):
    error = _error(tmp_path, json.dumps(config, allow_nan=True) if isinstance(config, dict) else config)
    assert error.code == code
    assert words in error.message
    assert error.span is not None and error.span.line == 1 and error.span.file.endswith("plan.ifr")
    assert error.hint


def test_a_field_the_config_does_not_have_is_named_with_the_fields_it_has(tmp_path):
    error = _error(tmp_path, LLAMA3_8B, "x = m.rope_theta\n")
    assert error.code == "unknown-field"
    assert "`m` has no field `rope_theta`" in error.message
    error = _error(tmp_path, LLAMA3_8B, "x = m.num_hidden_layer\n")
    assert error.hint == "did you mean num_hidden_layers?"


def test_the_file_is_read_as_untrusted_input(tmp_path):
    from ifr.semantics import hf_config
    big = tmp_path / "big.json"
    big.write_text('{"a": "' + "x" * hf_config.MAX_CONFIG_BYTES + '"}', encoding="utf-8")
    error = _error(tmp_path, LLAMA3_8B, 'use "big.json" as b\n')
    assert error.code == "too-large"
    (tmp_path / "bad.json").write_bytes(b'{"a": "\xff"}')
    assert _error(tmp_path, LLAMA3_8B, 'use "bad.json" as b\n').code == "encoding"
    (tmp_path / "dir.json").mkdir()
    assert _error(tmp_path, LLAMA3_8B, 'use "dir.json" as b\n').code == "unreadable"
    (tmp_path / "secret.txt").write_text("{}", encoding="utf-8")
    os.symlink(tmp_path / "secret.txt", tmp_path / "link.json")
    error = _error(tmp_path, LLAMA3_8B, 'use "link.json" as b\n')
    assert error.code == "unreadable" and "not a .json file" in error.message
    assert _error(tmp_path, LLAMA3_8B, 'use "none.json" as b\n').code == "no-such-file"
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe.json")
        assert _error(tmp_path, LLAMA3_8B, 'use "pipe.json" as b\n').code == "unreadable"


def test_readmes_worked_example_prints_what_readme_shows(tmp_path, capsys, monkeypatch):
    import re

    from ifr.cli import main
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### A model's config.json"):]
    config, = re.findall(r"```json\n(.*?)```", section, flags=re.S)[:1]
    plan, = re.findall(r"```ifr\n(.*?)```", section, flags=re.S)[:1]
    printed, = re.findall(r"first lines\)\n\n```\n(.*?)```", section, flags=re.S)[:1]
    (tmp_path / "llama3_8b.json").write_text(config, encoding="utf-8")
    (tmp_path / "plan.ifr").write_text(plan, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["run", "plan.ifr"]) == 0
    out = capsys.readouterr().out
    assert out.lstrip("\n").startswith(printed)
    assert main(["check", "plan.ifr"]) == 0
    # the figures README quotes for the three configs
    for c, figures in ((LLAMA3_8B, "8.03e9"), (MIXTRAL_8X7B, "46.70e9 and 12.88e9 active"),
                       (DEEPSEEK_V3, "671.03e9 and 37.55e9 active (36.63e9 without the embedding")):
        total, active = _weights(c)
        assert f"{total / 1e9:.2f}e9" in figures and (c is LLAMA3_8B or f"{active / 1e9:.2f}e9" in figures)
        assert " ".join(figures.split()) in " ".join(section.split())
    assert f"{(active - 129280 * 7168) / 1e9:.2f}e9" == "36.63e9"


def test_the_workbook_computes_the_derived_fields_as_ifr_does(tmp_path, soffice):
    """Each field is a formula over the config's numbers in the workbook too; LibreOffice's values are ifr's."""
    names = ("params", "active_params", "kv_bytes_per_token", "weight_bytes")
    model = ifr.load(_use(tmp_path, DEEPSEEK_V3, "".join(f"{n} = m.{n}\n" for n in names)))
    exported, values = recalculated(model, tmp_path)
    places = cell_places(exported, model)
    for name in ("m.params", "m.active_params", "m.attention_params", "m.kv_bytes_per_token", "params"):
        assert name in places
        assert values[places[name]] == pytest.approx(model.value(name), rel=1e-12)
    assert values[places["m.params"]] == pytest.approx(_weights(DEEPSEEK_V3)[0], rel=1e-12)


def test_a_fields_definition_is_its_key_in_the_config(tmp_path):
    """The editor's go-to-definition of `m.hidden_size` lands on the config's `"hidden_size"`."""
    from ifr.lsp.analysis import analyse
    path = _use(tmp_path, LLAMA3_8B, "x = m.hidden_size + m.vocab_size\n")
    config = (tmp_path / "config.json").read_text(encoding="utf-8").splitlines()
    result = analyse(str(path), path.read_text(encoding="utf-8"), {})
    for key in ("hidden_size", "vocab_size"):
        span = result.symbols[f"cell:m.{key}"].span
        assert config[span.line - 1][span.column - 1:span.end_column - 1] == key
