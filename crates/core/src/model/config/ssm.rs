//! The pieces the state-space and hybrid families share: their sizes, their attention layers,
//! a recurrent mixer's per-sequence state, a stack of mixer-only layers, the recurrent state's
//! precision and a list of layer indices.

use super::common::{check_kv, read_head_dim};
use super::kit::{add_attention, add_embeddings, full_attention, Acc, Comp, Parts};
use super::reader::Reader;
use crate::base::checked::{add, mul};
use crate::base::dtype::Dtype;
use crate::base::error::{shorten, CalcError, Phrase};
use crate::model::desc::{Ffn, Layer, LedgerSource, Mixer, SsmGroups};

/// Full attention (q/k/v/o, biases with `bias`) of `heads` query and `kv` key/value heads of
/// width `hd` in a model of width `h`; returns its mixer.
pub(super) fn attention(
    acc: &mut Acc,
    h: u64,
    (heads, kv, hd): (u64, u64, u64),
    bias: bool,
) -> Result<Mixer, CalcError> {
    add_attention(acc, h, heads, kv, hd, hd, bias, bias)?;
    Ok(full_attention(heads, kv, hd))
}

/// The width, layer count and vocabulary every SSM family states, in the ledger's order.
pub(super) fn read_sizes(r: &mut Reader) -> Result<(u64, u64, u64), CalcError> {
    let h = r.req("hidden_size", "why_size_model")?;
    let nl = r.layers()?;
    let vocab = r.req("vocab_size", "why_size_embeddings")?;
    Ok((h, nl, vocab))
}

/// The attention layers' query heads, key/value heads (as many unless stated; checked) and
/// head width, in a model of width `h`.
pub(super) fn read_attention(r: &mut Reader, h: u64) -> Result<(u64, u64, u64), CalcError> {
    let heads = r.req("num_attention_heads", "why_size_attention")?;
    let kv = r.or(
        ("kv_heads", "num_key_value_heads"),
        heads,
        "ldg_no_num_key_value_heads_equal_to",
    )?;
    check_kv(heads, kv, r.key_of("kv_heads"))?;
    let hd = read_head_dim(r, h, heads)?;
    Ok((heads, kv, hd))
}

/// A recurrent mixer of inner width `d_inner` and state size `d_state`, whose per-sequence
/// state is the convolution's window, `(k − 1)` steps of `conv_dim` channels, plus the
/// recurrent state of `recurrent` elements.
pub(super) fn ssm_mixer(
    (k, conv_dim): (u64, u64),
    recurrent: u64,
    (d_inner, d_state): (u64, u64),
    groups: Option<SsmGroups>,
) -> Result<Mixer, CalcError> {
    let w = "ovf_ssm_params";
    Ok(Mixer::Ssm {
        state_elems: add(w, &[mul(w, &[k.saturating_sub(1), conv_dim])?, recurrent])?,
        d_inner,
        d_state,
        groups,
    })
}

/// A model of SSM layers only: per layer an RMSNorm `h` and a mixer (`mixer` adds it), a
/// final norm, the embeddings and the head unless tied.
pub(super) fn ssm_stack(
    r: &mut Reader,
    (nl, h, vocab, tie): (u64, u64, u64, bool),
    mut mixer: impl FnMut(&mut Acc) -> Result<Mixer, CalcError>,
) -> Result<Parts, CalcError> {
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for _ in 0..nl {
        acc.add(Comp::Norms, h)?;
        layers.push(Layer {
            mixer: mixer(&mut acc)?,
            ffn: Ffn::None,
        });
    }
    acc.add(Comp::Norms, h)?;
    add_embeddings(r, &mut acc, vocab, h, tie)?;
    Ok(Parts::new(layers, acc, h, vocab, tie, None))
}

/// The precision the config keeps the recurrent state in, under `key`
/// ([`ModelDesc::ssm_state_dtype`](crate::model::desc::ModelDesc)): `float32`, `float16`
/// or `bfloat16` (vLLM's `MambaDType`); `None` (the model's precision) when the key is absent
/// or `auto`, or, with a warning, when it names anything else.
pub(super) fn read_ssm_state_dtype(r: &mut Reader, key: &'static str) -> Option<Dtype> {
    let (k, s) = r.string(key)?;
    if s.trim().eq_ignore_ascii_case("auto") {
        r.note("ssm_state_dtype", "auto", LedgerSource::Key(k.to_string()));
        return None;
    }
    match Dtype::parse(s) {
        Ok(d @ (Dtype::Fp32 | Dtype::Fp16 | Dtype::Bf16)) => {
            r.note("ssm_state_dtype", d, LedgerSource::Key(k.to_string()));
            Some(d)
        }
        _ => {
            r.warnings.push(
                Phrase::tr("wrn_ssm_state_dtype")
                    .val("k", k)
                    .val("shown", shorten(s)),
            );
            None
        }
    }
}

/// The layer indices listed under `key` (empty when absent), each below `n_layers`.
pub(super) fn layer_indices(
    r: &mut Reader,
    key: &'static str,
    n_layers: u64,
) -> Result<Vec<u64>, CalcError> {
    let idx = r.u64_list(key)?;
    if let Some(bad) = idx.iter().find(|i| **i >= n_layers) {
        return Err(CalcError::BadValue {
            key: key.into(),
            found: Phrase::verbatim(bad.to_string()),
            expected: Phrase::tr("exp_layer_index_below").val("n", n_layers),
        });
    }
    Ok(idx)
}
