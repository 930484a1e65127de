//! The readers many families share: the sizes every decoder states, the head size and the KV
//! heads, the MLP width, the experts per token, the tie, the position limit and the checkpoint
//! precision.

use super::reader::Reader;
use crate::base::checked::mul;
use crate::base::dtype::Dtype;
use crate::base::error::{shorten, CalcError, Phrase};
use crate::model::desc::LedgerSource;

/// The checkpoint precision from `torch_dtype` / `dtype`.
pub(super) fn base_dtype(r: &mut Reader, fam: &str) -> Result<Dtype, CalcError> {
    match r.string("torch_dtype") {
        Some((k, s)) => match Dtype::parse(s) {
            Ok(d) => {
                r.note("dtype", d, LedgerSource::Key(k.to_string()));
                Ok(d)
            }
            Err(_) => {
                let shown = shorten(s);
                r.warnings.push(
                    Phrase::tr("wrn_unknown_dtype")
                        .val("k", k)
                        .val("shown", &shown),
                );
                r.default_note("dtype", Dtype::Bf16, "ldg_the_config_s_dtype_is_not_a");
                Ok(Dtype::Bf16)
            }
        },
        None => {
            if fam == "gpt2" {
                r.default_note(
                    "dtype",
                    Dtype::Fp32,
                    "ldg_no_torch_dtype_gpt_2_checkpoints_are",
                );
                Ok(Dtype::Fp32)
            } else {
                r.default_note(
                    "dtype",
                    Dtype::Bf16,
                    "ldg_no_torch_dtype_dtype_assumed_bf16_the",
                );
                Ok(Dtype::Bf16)
            }
        }
    }
}

/// The sizes every decoder states: width, layers, attention heads, vocabulary.
pub(crate) struct Dims {
    pub h: u64,
    pub n_layers: u64,
    pub heads: u64,
    pub vocab: u64,
}

/// Reads the sizes every decoder states, in the ledger's order (`hidden_size`,
/// `num_hidden_layers`, `num_attention_heads`, `vocab_size`, each with its spellings); a
/// Gemma 3 text config without `vocab_size` takes the published 262,208.
pub(crate) fn read_dims(r: &mut Reader, fam: &str) -> Result<Dims, CalcError> {
    let h = r.req("hidden_size", "why_size_model")?;
    let n_layers = r.layers()?;
    let heads = r.req("num_attention_heads", "why_size_attention")?;
    let vocab = match (r.opt("vocab_size")?, fam) {
        (Some(v), _) => v,
        (None, "gemma3") => {
            r.default_note("vocab_size", 262_208, "ldg_no_vocab_size_the_gemma_3_text");
            262_208
        }
        (None, _) => {
            return Err(CalcError::MissingKey {
                key: "vocab_size".into(),
                why: Phrase::tr("why_size_embeddings"),
            })
        }
    };
    Ok(Dims {
        h,
        n_layers,
        heads,
        vocab,
    })
}

/// Shared reads for decoders: hidden size, layers, heads, head_dim, kv heads.
pub(crate) struct Core {
    pub h: u64,
    pub n_layers: u64,
    pub heads: u64,
    pub kv: u64,
    pub hd: u64,
    pub vocab: u64,
}

/// Reads the keys every transformer decoder has ([`read_dims`], then the head size and the KV
/// heads) and validates them.
pub(crate) fn read_core(r: &mut Reader, fam: &str) -> Result<Core, CalcError> {
    read_core_with(r, fam, kv_from_keys)
}

/// As [`read_core`], with the KV heads from `kv` (given the reader and the attention heads).
pub(crate) fn read_core_with(
    r: &mut Reader,
    fam: &str,
    kv: fn(&mut Reader, u64) -> Result<u64, CalcError>,
) -> Result<Core, CalcError> {
    let Dims {
        h,
        n_layers,
        heads,
        vocab,
    } = read_dims(r, fam)?;
    let hd = read_head_dim(r, h, heads)?;
    let kv = kv(r, heads)?;
    check_kv(heads, kv, r.key_of("kv_heads"))?;
    Ok(Core {
        h,
        n_layers,
        heads,
        kv,
        hd,
        vocab,
    })
}

/// The KV heads a decoder's keys give: `num_key_value_heads` (or a spelling), one with
/// `multi_query`, otherwise every attention head.
fn kv_from_keys(r: &mut Reader, heads: u64) -> Result<u64, CalcError> {
    Ok(match r.opt(("kv_heads", "num_key_value_heads"))? {
        Some(k) => k,
        None if r.find("multi_query").and_then(|(_, v)| v.as_bool()) == Some(true) => {
            r.derived("kv_heads", 1, "ldg_multi_query_true_one_shared_kv_head");
            1
        }
        None => {
            r.default_note("kv_heads", heads, "ldg_no_num_key_value_heads_multi_head");
            heads
        }
    })
}

/// An explicit `head_dim` beats hidden / heads (Qwen3, Gemma); otherwise the heads must
/// divide the hidden size.
pub(crate) fn read_head_dim(r: &mut Reader, h: u64, heads: u64) -> Result<u64, CalcError> {
    match r.opt("head_dim")? {
        Some(d) => Ok(d),
        None => {
            let d = split_heads(h, heads)?;
            r.derived("head_dim", d, "ldg_hidden_size_num_attention_heads_no_head");
            Ok(d)
        }
    }
}

/// `hidden / heads`, refusing a split that does not divide.
pub(crate) fn split_heads(h: u64, heads: u64) -> Result<u64, CalcError> {
    if heads == 0 || !h.is_multiple_of(heads) {
        return Err(CalcError::HeadsDoNotDivide { heads, hidden: h });
    }
    Ok(h / heads)
}

/// How a family fills a missing MLP width with 4 × hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FourH {
    /// The class leaves it null and the model computes 4 × hidden (GPT-2's `n_inner`,
    /// Falcon's `ffn_hidden_size`): a derivation.
    Derived,
    /// The config should state it; 4 × hidden is a guess (a default in the ledger).
    Guessed,
}

/// `intermediate_size` (and its spellings), or 4 × hidden recorded as `how` says with the
/// reason `why` (an `ldg_…` key).
pub(crate) fn read_intermediate(
    r: &mut Reader,
    h: u64,
    how: FourH,
    why: &'static str,
) -> Result<u64, CalcError> {
    let key = "intermediate_size";
    let four_h = mul("ovf_intermediate", &[4, h])?;
    match how {
        FourH::Guessed => r.or(key, four_h, why),
        FourH::Derived => match r.opt(key)? {
            Some(i) => Ok(i),
            None => {
                r.derived(key, four_h, why);
                Ok(four_h)
            }
        },
    }
}

/// The experts a token is routed to (`num_experts_per_tok` and its spellings), at most
/// `experts`: a config asking for more is refused with the key it used (every MoE family).
/// `default` (a value and its `ldg_…` reason) applies when neither the config nor its class
/// gives one; without it the key is required.
pub(crate) fn read_top_k(
    r: &mut Reader,
    experts: u64,
    default: Option<(u64, &'static str)>,
) -> Result<u64, CalcError> {
    let (field, key) = ("experts_per_token", "num_experts_per_tok");
    let k = match default {
        Some((d, why)) => r.or((field, key), d, why)?,
        None => r.req((field, key), "why_count_active_experts")?,
    };
    if k > experts {
        return Err(CalcError::BadValue {
            key: r.key_of(field).unwrap_or(key).into(),
            found: Phrase::verbatim(k.to_string()),
            expected: Phrase::tr("exp_at_most_experts").val("experts", experts),
        });
    }
    Ok(k)
}

/// The refusal of a per-layer list under `key` that holds `found` entries where the model has
/// `n_layers` layers.
pub(crate) fn not_one_per_layer(key: &str, found: usize, n_layers: u64) -> CalcError {
    CalcError::BadValue {
        key: key.into(),
        found: Phrase::tr("fnd_list_of").val("n", found),
        expected: Phrase::tr("exp_one_per_layer").val("n", n_layers),
    }
}

/// `mlp_layer_types`' two kinds: a dense MLP (`false`) or a MoE (`true`).
pub(crate) const MLP_LAYER_KINDS: [(&str, bool); 2] = [("dense", false), ("sparse", true)];

/// `key`, a list naming each layer one of two kinds, as booleans (`names`: each name and the
/// value it reads as, in the order the refusal lists them), if given; with `n`, one per layer.
/// Any other name is refused with the two.
pub(crate) fn kind_per_layer(
    r: &mut Reader,
    key: &'static str,
    n: Option<u64>,
    names: [(&str, bool); 2],
) -> Result<Option<Vec<bool>>, CalcError> {
    let Some(types) = r.str_list(key)? else {
        return Ok(None);
    };
    if let Some(n) = n.filter(|&n| types.len() as u64 != n) {
        return Err(not_one_per_layer(key, types.len(), n));
    }
    types
        .iter()
        .map(|t| match names.iter().find(|(name, _)| name == t) {
            Some(&(_, v)) => Ok(v),
            None => Err(CalcError::BadValue {
                key: key.into(),
                found: Phrase::verbatim(shorten(t)),
                expected: Phrase::tr("exp_one_of")
                    .val("list", format!("\"{}\", \"{}\"", names[0].0, names[1].0)),
            }),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// KV heads must divide the attention heads and not exceed them; the error names `key`, the
/// spelling the config used (`n_head_kv`, `attn_config.kv_n_heads`, …), or
/// `num_key_value_heads` when the value was not read from a key.
pub(crate) fn check_kv(heads: u64, kv: u64, key: Option<&str>) -> Result<(), CalcError> {
    if kv > heads || !heads.is_multiple_of(kv) {
        return Err(CalcError::BadValue {
            key: key.unwrap_or("num_key_value_heads").into(),
            found: Phrase::verbatim(kv.to_string()),
            expected: Phrase::tr("exp_divisor_heads").val("heads", heads),
        });
    }
    Ok(())
}

/// Reads `tie_word_embeddings` with the family default.
pub(crate) fn read_tie(r: &mut Reader, default: bool, fam: &str) -> Result<bool, CalcError> {
    // Neither part states it and the two classes disagree (Mistral3Config ties, MistralConfig
    // does not; Qwen3VLMoeConfig does not, its text class does): transformers 4.x followed the
    // text class, 5.x follows the top level. The published checkpoints store the head, so
    // the untied reading is taken.
    let k = "tie_word_embeddings";
    if r.find(k).is_none() {
        let ds = r.class_defaults(k);
        let untied = ds.iter().find(|(_, v)| v.as_bool() == Some(false));
        if ds.len() > 1 && ds.iter().any(|(_, v)| v.as_bool() == Some(true)) {
            if let Some((c, _)) = untied {
                r.note_class_default(k, false, k, c);
                return Ok(false);
            }
        }
    }
    let why = Phrase::tr(if default {
        "ldg_tie_default"
    } else {
        "ldg_untied_default"
    })
    .val("fam", fam);
    r.flag_why("tie_word_embeddings", default, why)
}

/// `max_position_embeddings` and its spellings (`Infinity` = no limit).
pub(crate) fn read_max_pos(r: &mut Reader) -> Result<Option<u64>, CalcError> {
    r.limit("max_position_embeddings")
}
