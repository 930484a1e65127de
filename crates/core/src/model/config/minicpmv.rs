//! MiniCPM-V (`model_type` "minicpmv", `MiniCPMV`, remote code), as its `modeling_minicpmv.py`
//! and `resampler.py` build it (vLLM's `minicpmv.py` loads the same tensors):
//!
//! - the language model `llm`, from the top-level keys, by version: MiniCPM-V 2.0 a MiniCPM
//!   (the Llama layout, no biases; `scale_emb`, `scale_depth` and `dim_model_base` are scalars),
//!   2.5 Llama 3, 2.6 Qwen2 (q/k/v biases);
//! - the vision tower `vpm`: for 2.0, the timm ViT `vision_encoder` names (SigLIP so400m: patch
//!   conv `C·p²·v + v`, learned positions `(image/p)²·v`, blocks of two LayerNorms `4v`, qkv and
//!   proj `4v² + 4v`, MLP `2·v·I + I + v`, final LayerNorm `2v`; its attention-pool head is
//!   replaced by an identity, no class token, no classifier); for 2.5 and 2.6 the SigLIP (NaViT)
//!   tower of `vision_config` (the same blocks, positions `(image_size/p)²·v`, post LayerNorm
//!   `2v`); with `drop_vision_last_layer` (MiniCPMVConfig's default), one block fewer;
//! - the resampler, one perceiver-style cross-attention into the language model's width h: Q
//!   learned queries `Q·h`, `kv_proj` `v·h` (none when v = h), attention in-projection
//!   `3h² + 3h` and out-projection `h² + h`, LayerNorms ln_q, ln_kv, ln_post `6h`, `proj` `h²`.
//!   MiniCPM-V 2.0's resampler has `isqrt(query_num)²` queries and stores its 2-D sin-cos
//!   `pos_embed` (`Q·h`) as a parameter; 2.5 and 2.6 compute it into a buffer the checkpoint
//!   does not hold.
//!
//! The tower and the resampler are counted in `params.vision`; the KV cache is the language
//! model's alone.

use super::decoder;
use super::kit::{Acc, Parts};
use super::reader::Reader;
use super::vision::{channels, layer, read_tower, req, tower, VIT, W};
use crate::base::checked::{add, mul};
use crate::base::error::{CalcError, Phrase};
use crate::model::desc::LedgerSource;
use serde_json::{Map, Value};

/// A MiniCPM-V version (`(2, 5)` for 2.5).
type Version = (u64, u64);

/// The version as vLLM's `get_version_by_config` reads it: the `version` key (a number or a
/// text, 2.5 or "2.6"), else 2.0 for MiniCPM-V 2's sizes (hidden_size 2304 and query_num 64),
/// else 2.5. Also the spelling it was read from, for the ledger.
fn version_of(root: &Map<String, Value>) -> (Version, Option<String>) {
    let given = root.get("version").and_then(|v| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    });
    if let Some(text) = &given {
        let mut parts = text.trim().splitn(2, '.');
        let major = parts.next().and_then(|p| p.parse::<u64>().ok());
        let minor = parts.next().map_or(Some(0), |p| p.parse::<u64>().ok());
        if let (Some(major), Some(minor)) = (major, minor) {
            return ((major, minor), given);
        }
    }
    let int = |k: &str| root.get(k).and_then(Value::as_u64);
    let v2 = int("hidden_size") == Some(2304) && int("query_num").unwrap_or(64) == 64;
    (if v2 { (2, 0) } else { (2, 5) }, None)
}

/// The family that reads the language model of `v`, and whether this calculator reads that
/// version exactly (vLLM builds MiniCPM-V 4.5 on Qwen3, with a resampler not modelled here; any
/// other version is read as a Llama-style model, with a warning).
fn llm_family(v: Version) -> (&'static str, bool) {
    match v {
        (2, 0) | (2, 5) => ("llama", true),
        (2, 6) => ("qwen2", true),
        (4, 5) => ("qwen3", false),
        _ => ("llama", false),
    }
}

/// The language model of a MiniCPM-V config.
pub(super) fn build(r: &mut Reader) -> Result<Parts, CalcError> {
    let (v, given) = version_of(r.root());
    let shown = format!("{}.{}", v.0, v.1);
    match &given {
        Some(_) => r.note(
            "minicpmv_version",
            &shown,
            LedgerSource::Key("version".into()),
        ),
        None => r.derived("minicpmv_version", &shown, "ldg_minicpmv_version_by_sizes"),
    }
    let (fam, exact) = llm_family(v);
    r.derived("language_model_family", fam, "ldg_minicpmv_llm_by_version");
    if !exact {
        r.warnings.push(
            Phrase::tr("wrn_minicpmv_version")
                .val("v", &shown)
                .val("fam", fam),
        );
    }
    decoder::build(r, fam)
}

/// A timm ViT that a MiniCPM-V 2.0 config may name in `vision_encoder`.
struct TimmVit {
    name: &'static str,
    width: u64,
    depth: u64,
    mlp: u64,
    patch: u64,
    image: u64,
}

/// timm's `vit_so400m_patch14_siglip_384` (`vision_transformer.py`: patch 14, embed_dim 1152,
/// depth 27, mlp_ratio 3.7362 → int(1152 × 3.7362) = 4304, 384-pixel images, no class token).
const TIMM_VITS: &[TimmVit] = &[TimmVit {
    name: "vit_so400m_patch14_siglip_384",
    width: 1152,
    depth: 27,
    mlp: 4304,
    patch: 14,
    image: 384,
}];

/// MiniCPMVConfig's `vision_encoder` when the config omits it (MiniCPM-V 2.0).
const DEFAULT_ENCODER: &str = "vit_so400m_patch14_siglip_384.webli";

/// The blocks a checkpoint keeps of `depth` (one fewer with `drop_vision_last_layer`).
fn kept_blocks(r: &mut Reader, depth: u64, drop_last: bool) -> u64 {
    if !drop_last {
        return depth;
    }
    let kept = depth.saturating_sub(1);
    r.derived("vision.blocks_stored", kept, "ldg_minicpmv_drop_last_layer");
    kept
}

/// MiniCPM-V 2.0's timm tower: its width and its parameters, `None` for a ViT not in
/// [`TIMM_VITS`].
fn timm_tower(r: &mut Reader, drop_last: bool) -> Result<Option<(u64, u64)>, CalcError> {
    let name = match r.string("vision_encoder") {
        Some((k, s)) => {
            r.note("vision_encoder", s, LedgerSource::Key(k.to_string()));
            s.to_string()
        }
        None => {
            r.default_note(
                "vision_encoder",
                DEFAULT_ENCODER,
                "ldg_minicpmv_default_encoder",
            );
            DEFAULT_ENCODER.to_string()
        }
    };
    // timm names a pretrained tag after a dot (`.webli`); the architecture is the part before.
    let arch = name.split('.').next().unwrap_or("");
    let Some(t) = TIMM_VITS.iter().find(|t| t.name == arch) else {
        return Ok(None);
    };
    r.derived("vision.hidden_size", t.width, "ldg_minicpmv_timm_so400m");
    let blocks = kept_blocks(r, t.depth, drop_last);
    let side = t.image / t.patch;
    let v = t.width;
    let total = add(
        W,
        &[
            mul(W, &[3, t.patch, t.patch, v])?,
            v,
            mul(W, &[side, side, v])?,
            mul(W, &[blocks, layer(v, t.mlp, &VIT)?])?,
            mul(W, &[2, v])?,
        ],
    )?;
    Ok(Some((v, total)))
}

/// MiniCPM-V 2.5/2.6's SigLIP (NaViT) tower of `vc`: its width and its parameters.
fn navit_tower(
    r: &mut Reader,
    vc: &Map<String, Value>,
    drop_last: bool,
) -> Result<(u64, u64), CalcError> {
    let ((v, vi, depth, patch), image, ch) = read_tower(r, vc, None, |t| {
        let sizes = tower(t)?;
        Ok((
            sizes,
            req(t, "vision.image_size", "image_size")?,
            channels(t)?,
        ))
    })?;
    let blocks = kept_blocks(r, depth, drop_last);
    let side = image / patch;
    let total = add(
        W,
        &[
            mul(W, &[ch, patch, patch, v])?,
            v,
            mul(W, &[side, side, v])?,
            mul(W, &[blocks, layer(v, vi, &VIT)?])?,
            mul(W, &[2, v])?,
        ],
    )?;
    Ok((v, total))
}

/// The resampler of `queries` queries from width `v` into width `h`, with a stored `pos_embed`
/// when `pos_param` (MiniCPM-V 2.0).
fn resampler(queries: u64, v: u64, h: u64, pos_param: bool) -> Result<u64, CalcError> {
    let qh = mul(W, &[queries, h])?;
    add(
        W,
        &[
            qh,
            if v == h { 0 } else { mul(W, &[v, h])? },
            mul(W, &[3, h, h])?,
            mul(W, &[3, h])?,
            mul(W, &[h, h])?,
            h,
            mul(W, &[6, h])?,
            mul(W, &[h, h])?,
            if pos_param { qh } else { 0 },
        ],
    )
}

/// Adds MiniCPM-V's vision tower and resampler (into the language model of width `text_h`) to
/// `acc` as its vision part; warns when the tower is one this calculator does not know.
pub(super) fn towers(
    r: &mut Reader,
    acc: &mut Acc,
    root: &Map<String, Value>,
    text_h: u64,
) -> Result<(), CalcError> {
    let (v, _) = version_of(root);
    let v2 = v == (2, 0);
    let drop_last = r.flag(
        "drop_vision_last_layer",
        true,
        "ldg_minicpmv_drop_last_default",
    )?;
    let tower = if v2 {
        timm_tower(r, drop_last)?
    } else {
        match root.get("vision_config").and_then(Value::as_object) {
            Some(vc) => Some(navit_tower(r, vc, drop_last)?),
            None => None,
        }
    };
    let Some((vision_width, tower_params)) = tower else {
        r.warnings.push(Phrase::tr("wrn_vision_not_counted"));
        return Ok(());
    };
    let query_num = r.or("query_num", 64, "ldg_minicpmv_query_num_default")?;
    let queries = if v2 {
        let g = query_num.isqrt();
        g * g
    } else {
        query_num
    };
    let res = resampler(queries, vision_width, text_h, v2)?;
    r.derived(
        "resampler_parameters",
        res,
        if v2 {
            "ldg_minicpmv_resampler_pos_embed"
        } else {
            "ldg_minicpmv_resampler"
        },
    );
    let total = add(W, &[tower_params, res])?;
    r.derived("vision_parameters", total, "ldg_vision_tower_counted");
    acc.tower(total)
}

#[cfg(test)]
mod tests {
    use super::super::parse_model_text;
    use super::*;

    #[test]
    fn versions_read_as_vllm_reads_them() {
        let of = |s: &str| {
            let v: Value = serde_json::from_str(s).unwrap_or(Value::Null);
            v.as_object().map(|o| version_of(o).0)
        };
        assert_eq!(of(r#"{"version": "2.5"}"#), Some((2, 5)));
        assert_eq!(of(r#"{"version": 2.6}"#), Some((2, 6)));
        assert_eq!(of(r#"{"version": 4.0}"#), Some((4, 0)));
        assert_eq!(
            of(r#"{"hidden_size": 2304, "query_num": 64}"#),
            Some((2, 0))
        );
        assert_eq!(
            of(r#"{"hidden_size": 4096, "query_num": 96}"#),
            Some((2, 5))
        );
    }

    #[test]
    fn minicpm_v_2_6_sizes_give_its_published_total() {
        // No verbatim MiniCPM-V-2_6 config.json was found (tests/fixtures/research); these are
        // its sizes: a Qwen2-7B language model with the 151,666-token vocabulary of its
        // checkpoint, the 27-block SigLIP tower (no block dropped: 27 × 16 + 5 vpm tensors)
        // and 64 queries. The Hub counts 8,099,175,152 parameters (model_totals.csv).
        // LLM: per layer q 3584² + 3584, k and v 2·(3584·512 + 512), o 3584², MLP
        // 3·3584·18944, norms 2·3584 = 233,057,792; ×28 + 3584 + 2·151666·3584 = 7,612,763,648.
        // Tower: 3·14²·1152 + 1152 + 70²·1152 + 27 × 15,239,504 + 2·1152 = 417,792,240.
        // Resampler: 64·3584 + 1152·3584 + 3·3584² + 3·3584 + 3584² + 3584 + 6·3584 + 3584²
        // = 68,619,264.
        let cfg = r#"{"architectures": ["MiniCPMV"], "model_type": "minicpmv", "version": 2.6,
            "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
            "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 151666,
            "max_position_embeddings": 32768, "tie_word_embeddings": false, "query_num": 64,
            "drop_vision_last_layer": false, "torch_dtype": "bfloat16",
            "vision_config": {"hidden_size": 1152, "image_size": 980, "intermediate_size": 4304,
              "model_type": "siglip", "num_attention_heads": 16, "num_hidden_layers": 27,
              "patch_size": 14}}"#;
        let m = parse_model_text(cfg).ok();
        let p = m.as_ref().map(|m| &m.params);
        assert_eq!(p.map(|p| p.total), Some(8_099_175_152));
        assert_eq!(p.map(|p| p.language_model), Some(7_612_763_648));
        assert_eq!(p.map(|p| p.vision), Some(417_792_240 + 68_619_264));
        assert!(m.is_some_and(|m| m.warnings.is_empty()));
    }

    #[test]
    fn an_unknown_timm_tower_is_left_out_with_a_warning() {
        let cfg = r#"{"model_type": "minicpmv", "hidden_size": 64, "intermediate_size": 128,
            "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
            "version": "2.0", "vision_encoder": "vit_giant_patch14_clip_224"}"#;
        let m = parse_model_text(cfg).ok();
        assert_eq!(m.as_ref().map(|m| m.params.vision), Some(0));
        assert!(m.is_some_and(|m| m.warnings.len() == 1));
    }
}
