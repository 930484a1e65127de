//! The per-layer attention windows of the decoders (`None`: full attention): from
//! `layer_types`, else from each family's own layout (a sliding window on every other layer, on
//! all but every n-th layer, from `max_window_layers` on, or Llama 4's chunked attention).
//!
//! The window is `sliding_window` as the config states it. Cohere 2 (dense, `cohere2`) too:
//! vLLM serves it with `commandr.py` (`Cohere2ForCausalLM`), whose sliding layers get
//! `per_layer_sliding_window = config.sliding_window` (vllm-project/vllm#11583 prints 4,096 for
//! Command R7B's 4,096); only vLLM's `cohere2_moe.py` adds 1 (`cohere2_moe`'s reader).

use super::common::not_one_per_layer;
use super::reader::Reader;
use crate::base::error::{shorten, CalcError, Phrase};

/// Reads the per-layer attention windows (`None` = full attention).
pub(super) fn read_windows(
    r: &mut Reader,
    fam: &str,
    n_layers: u64,
) -> Result<Vec<Option<u64>>, CalcError> {
    let n = usize::try_from(n_layers).map_err(|_| CalcError::Overflow {
        what: Phrase::tr("ovf_layer_count"),
    })?;
    let sw = r.limit("sliding_window")?;
    let chunk = if fam == "llama4" {
        r.limit("attention_chunk_size")?
    } else {
        None
    };
    if let Some(types) = r.str_list("layer_types")? {
        return windows_from_types(r, &types, n, sw, chunk);
    }
    let mut out = vec![None; n];
    family_windows(r, fam, sw, chunk, &mut out)?;
    Ok(out)
}

/// Reads the windows from an explicit `layer_types` list (one entry per layer).
fn windows_from_types(
    r: &mut Reader,
    types: &[String],
    n: usize,
    sw: Option<u64>,
    chunk: Option<u64>,
) -> Result<Vec<Option<u64>>, CalcError> {
    if types.len() != n {
        return Err(not_one_per_layer("layer_types", types.len(), n as u64));
    }
    let mut out = Vec::with_capacity(n);
    for t in types {
        out.push(match t.as_str() {
            "full_attention" | "attention" | "global" => None,
            "sliding_attention" | "sliding_window" | "local" => {
                if sw.is_none() {
                    r.warnings.push(Phrase::tr("wrn_sliding_without_window"));
                }
                sw
            }
            "chunked_attention" => chunk.or(sw),
            other => {
                r.warnings
                    .push(Phrase::tr("wrn_unknown_layer_type").val("t", shorten(other)));
                None
            }
        });
    }
    Ok(out)
}

/// Sets the windows from the family's own layout when there is no `layer_types` list.
fn family_windows(
    r: &mut Reader,
    fam: &str,
    sw: Option<u64>,
    chunk: Option<u64>,
    out: &mut [Option<u64>],
) -> Result<(), CalcError> {
    match fam {
        "llama" | "gpt_neox" | "deepseek" => {}
        "gemma2" => {
            if let Some(w) = sw {
                r.derived(
                    "window_layers",
                    "ℓ = 0, 2, 4, …",
                    "ldg_gemma_2_alternates_sliding_even_and_global",
                );
                for (i, x) in out.iter_mut().enumerate() {
                    if i.is_multiple_of(2) {
                        *x = Some(w);
                    }
                }
            }
        }
        "gemma3" => {
            let p = r.or(
                "sliding_window_pattern",
                6,
                "ldg_gemma_3_default_every_6th_layer_is",
            )?;
            if let Some(w) = sw {
                for (i, x) in out.iter_mut().enumerate() {
                    if !(i as u64 + 1).is_multiple_of(p) {
                        *x = Some(w);
                    }
                }
            }
        }
        "cohere2" => {
            // Cohere2Config without layer_types: full attention where (ℓ + 1) % pattern == 0.
            let p = r.or(
                "sliding_window_pattern",
                4,
                "ldg_cohere2_default_every_4th_layer_full",
            )?;
            if let Some(w) = sw {
                every_nth_global(out, p, w);
            }
        }
        "gemma3n" => {
            // Gemma3nTextConfig (no layer_types): full attention where (ℓ + 1) % 5 == 0.
            if let Some(w) = sw {
                r.derived(
                    "window_layers",
                    "ℓ + 1 ≢ 0 (mod 5)",
                    "ldg_gemma3n_every_5th_global",
                );
                for (i, x) in out.iter_mut().enumerate() {
                    if !(i as u64 + 1).is_multiple_of(5) {
                        *x = Some(w);
                    }
                }
            }
        }
        "qwen2" | "qwen2_moe" | "qwen3" | "qwen3_moe" => qwen_windows(r, sw, out)?,
        // AfmoeConfig: full attention where (ℓ + 1) % global_attn_every_n_layers == 0.
        "afmoe" => {
            let n = r.or(
                "global_attn_every_n_layers",
                4,
                "ldg_afmoe_default_global_every_4",
            )?;
            if let Some(w) = sw {
                every_nth_global(out, n, w);
            }
        }
        "exaone_moe" => {
            if let Some(w) = sw {
                exaone_pattern_windows(r, w, out)?;
            }
        }
        // Dots1Config: "sliding_attention" from layer `max_window_layers` on (62 by default,
        // every layer of dots.llm1, whose config sets `sliding_window` null anyway).
        "dots1" => {
            if let Some(w) = sw {
                windows_from_max_window_layers(r, w, out)?;
            }
        }
        "llama4" => {
            if let Some(c) = chunk {
                llama4_windows(r, c, out)?;
            }
        }
        _ => {
            if let Some(w) = sw {
                r.derived(
                    "window_layers",
                    "all",
                    "ldg_sliding_window_applies_to_every_layer_mistra",
                );
                out.iter_mut().for_each(|x| *x = Some(w));
            }
        }
    }
    Ok(())
}

/// The window `w` on every layer but each `n`-th (ℓ + 1 ≡ 0 mod n: full attention).
fn every_nth_global(out: &mut [Option<u64>], n: u64, w: u64) {
    for (i, x) in out.iter_mut().enumerate() {
        if !(i as u64 + 1).is_multiple_of(n) {
            *x = Some(w);
        }
    }
}

/// EXAONE-MoE without `layer_types` (`ExaoneMoeConfig`): `sliding_window_pattern` a number `n`
/// (every `n`-th layer global, 4 when absent) or a string of `L` (local: the window) and `G`
/// (global) repeated from layer 0, whose last layer is always global.
fn exaone_pattern_windows(
    r: &mut Reader,
    w: u64,
    out: &mut [Option<u64>],
) -> Result<(), CalcError> {
    let key = "sliding_window_pattern";
    match r.find(key) {
        Some((k, serde_json::Value::String(p))) => {
            let chars: Vec<char> = p.chars().collect();
            if chars.is_empty() || chars.iter().any(|c| !matches!(c, 'L' | 'G')) {
                return Err(CalcError::BadValue {
                    key: k.into(),
                    found: Phrase::verbatim(shorten(p)),
                    expected: Phrase::tr("exp_local_global_chars"),
                });
            }
            for (i, x) in out.iter_mut().enumerate() {
                if chars.get(i % chars.len()) == Some(&'L') {
                    *x = Some(w);
                }
            }
            if let Some(last) = out.last_mut() {
                *last = None;
            }
            r.derived("window_layers", p, "ldg_exaone_moe_pattern_string");
        }
        _ => {
            let n = r.or(key, 4, "ldg_exaone_moe_default_pattern_4")?;
            every_nth_global(out, n, w);
        }
    }
    Ok(())
}

/// Qwen: `use_sliding_window` turns the window on for layers from `max_window_layers` on.
fn qwen_windows(r: &mut Reader, sw: Option<u64>, out: &mut [Option<u64>]) -> Result<(), CalcError> {
    let on = r.flag(
        "use_sliding_window",
        false,
        "ldg_qwen_default_sliding_window_off",
    )?;
    if let (true, Some(w)) = (on, sw) {
        windows_from_max_window_layers(r, w, out)?;
    }
    Ok(())
}

/// The window `w` on every layer from `max_window_layers` on (Qwen with `use_sliding_window`,
/// dots.llm1).
fn windows_from_max_window_layers(
    r: &mut Reader,
    w: u64,
    out: &mut [Option<u64>],
) -> Result<(), CalcError> {
    let from = r.or0(
        "max_window_layers",
        0,
        "ldg_no_max_window_layers_every_layer_slides",
    )?;
    for (i, x) in out.iter_mut().enumerate() {
        if i as u64 >= from {
            *x = Some(w);
        }
    }
    Ok(())
}

/// Llama 4: the RoPE layers (from `no_rope_layers`, else all but every
/// `no_rope_layer_interval`-th) attend in chunks of `c`.
fn llama4_windows(r: &mut Reader, c: u64, out: &mut [Option<u64>]) -> Result<(), CalcError> {
    let nope = r.u64_list("no_rope_layers")?;
    let interval = r.or(
        "no_rope_layer_interval",
        4,
        "ldg_llama_4_default_every_4th_layer_has",
    )?;
    for (i, x) in out.iter_mut().enumerate() {
        let rope = match nope.get(i) {
            Some(v) => *v != 0,
            None => !(i as u64 + 1).is_multiple_of(interval),
        };
        if rope {
            *x = Some(c);
        }
    }
    r.derived(
        "window_layers",
        "ℓ: RoPE",
        "ldg_llama_4_chunked_attention_rope_layers_attend",
    );
    Ok(())
}
