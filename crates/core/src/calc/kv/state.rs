//! Recurrent state bytes per sequence of the SSM / linear layers, whole or per layer, with
//! their derivation ([`state_bytes`], [`state_bytes_per_layer`]).

use super::cache::KvBytes;
use crate::base::checked::{add, bits_to_bytes};
use crate::base::derivation::{binary_bytes_text, group, Derivation, Source, Term};
use crate::base::dtype::Dtype;
use crate::base::error::{CalcError, Phrase};
use crate::base::expr::Expr;
use crate::base::units::{fmt_sig, Bytes};
use crate::calc::tp::state_elems_per_gpu;
use crate::model::{Mixer, ModelDesc};

/// Recurrent state bytes of one sequence (SSM / linear layers), in precision `d`, per GPU
/// under tensor parallelism `tp` (state channels split `tp` ways, rounded up); 0 for pure
/// attention models. Where the config names the recurrent state's precision
/// ([`ModelDesc::ssm_state_dtype`], vLLM's `mamba_ssm_cache_dtype`), that part is kept in it
/// and the conv state in `d`, as vLLM's `MambaSpec` pages the two (`mamba_utils.py`,
/// `_mamba_state_dtype`).
pub fn state_bytes(m: &ModelDesc, d: Dtype, tp: u64) -> Result<KvBytes, CalcError> {
    if tp == 0 {
        return Err(CalcError::range_error(
            Phrase::verbatim("tp"),
            0,
            Phrase::tr("rng_at_least_1"),
        ));
    }
    let t = state_totals(m, tp)?;
    let ssm = split_dtype(m, d);
    let mut notes = vec![if ssm.is_some() {
        "note_state_dtype_split".to_string()
    } else {
        "note_state_dtype".to_string()
    }];
    if t.padded {
        notes.push("note_mamba_groups_padded".into());
    }
    let (bytes, derivation) = match ssm {
        None => whole_state(&t, d)?,
        Some((sd, key)) => split_state(&t, d, sd, key)?,
    };
    Ok(KvBytes {
        bytes: Bytes(bytes),
        derivation: Derivation {
            result: binary_bytes_text(Bytes(bytes)),
            notes,
            ..derivation
        },
    })
}

/// The terms every state derivation starts with: the recurrent layers `L_ssm` and the bytes
/// per element `b` of precision `d`.
fn state_terms(t: &StateTotals, d: Dtype) -> [Term; 2] {
    [
        Term::new(
            "L_ssm",
            "term_layers",
            t.layers.to_string(),
            "",
            Source::Derived("src_ssm_layers".into()),
        ),
        Term::new(
            "b",
            "term_kv_bytes",
            fmt_sig(d.bytes()),
            "B",
            Source::Default("state_dtype_model".into()),
        ),
    ]
}

/// The bytes and the derivation, without result and notes, of a state kept whole in `d`:
/// `L_ssm × S × b` (the elements in all where the layers differ).
fn whole_state(t: &StateTotals, d: Dtype) -> Result<(u64, Derivation), CalcError> {
    let bytes = bits_to_bytes("ovf_state_bytes", t.elems, d.bits())?;
    let elems = Expr::mul([
        Expr::sym("L_ssm", t.layers.to_string(), t.layers),
        Expr::sym("S", group(t.first.1), t.first.1),
    ]);
    let elems = if t.uniform {
        elems
    } else {
        Expr::shown(elems, group(t.elems))
    };
    let e = Expr::mul([elems, Expr::element_bytes("b", d.bits(), "")]);
    let [layers, b] = state_terms(t, d);
    let s = Term::new(
        "S",
        "term_state_elems",
        group(t.first.0),
        "",
        Source::Derived("src_ssm_state_per_layer".into()),
    );
    let terms = vec![layers, s, b];
    Ok((
        bytes,
        Derivation {
            terms,
            ..Derivation::of("state_bytes", &e)
        },
    ))
}

/// The recurrent layers' state on one of `tp` GPUs: their count, the elements in all and the
/// recurrent (SSM) part of those, the first layer's (whole, on one GPU, recurrent on one GPU),
/// whether every layer has the same whole and per-GPU state (`uniform`) and the same recurrent
/// part too (`uniform_split`), and whether vLLM pads the groups.
struct StateTotals {
    layers: u64,
    elems: u64,
    recurrent: u64,
    first: (u64, u64, u64),
    uniform: bool,
    uniform_split: bool,
    padded: bool,
}

fn state_totals(m: &ModelDesc, tp: u64) -> Result<StateTotals, CalcError> {
    let (mut layers, mut elems, mut recurrent, mut padded) = (0u64, 0u64, 0u64, false);
    let mut per: Vec<(u64, u64, u64)> = Vec::new();
    for mixer in ssm_mixers(m) {
        let on_gpu = state_elems_per_gpu(mixer, tp);
        let whole = whole_state_elems(mixer);
        padded |= on_gpu != whole.div_ceil(tp);
        elems = add("ovf_state_elements", &[elems, on_gpu])?;
        let rec = recurrent_per_gpu(mixer, tp);
        recurrent = add("ovf_state_elements", &[recurrent, rec])?;
        layers += 1;
        if !per.contains(&(whole, on_gpu, rec)) {
            per.push((whole, on_gpu, rec));
        }
    }
    let first = per.first().copied().unwrap_or((0, 0, 0));
    Ok(StateTotals {
        layers,
        elems,
        recurrent,
        first,
        uniform: !per.is_empty() && per.iter().all(|p| (p.0, p.1) == (first.0, first.1)),
        uniform_split: per.len() == 1,
        padded,
    })
}

/// The bytes and the derivation, without result and notes, of a state whose recurrent part
/// is kept in `sd` (named by the config key `key`) and its conv part in `d`:
/// `L_ssm × (S_c × b + S_r × b_r)` (the conv and recurrent elements in all where the layers
/// differ).
fn split_state(
    t: &StateTotals,
    d: Dtype,
    sd: Dtype,
    key: String,
) -> Result<(u64, Derivation), CalcError> {
    let conv = t.elems - t.recurrent;
    let bytes = add(
        "ovf_state_bytes",
        &[
            bits_to_bytes("ovf_state_bytes", conv, d.bits())?,
            bits_to_bytes("ovf_state_bytes", t.recurrent, sd.bits())?,
        ],
    )?;
    let (_, on_gpu, rec) = t.first;
    let e = Expr::mul([
        Expr::sym("L_ssm", t.layers.to_string(), t.layers),
        Expr::add([
            Expr::mul([
                Expr::sym("S_c", group(on_gpu - rec), on_gpu - rec),
                Expr::element_bytes("b", d.bits(), ""),
            ]),
            Expr::mul([
                Expr::sym("S_r", group(rec), rec),
                Expr::element_bytes("b_r", sd.bits(), ""),
            ]),
        ]),
    ]);
    let substituted = if t.uniform_split {
        e.values()
    } else {
        format!(
            "{} × {} + {} × {}",
            group(conv),
            fmt_sig(d.bytes()),
            group(t.recurrent),
            fmt_sig(sd.bytes())
        )
    };
    let terms = split_state_terms(t, d, sd, key);
    Ok((
        bytes,
        Derivation {
            substituted,
            terms,
            ..Derivation::of("state_bytes", &e)
        },
    ))
}

/// The terms of [`split_state`]'s derivation: `L_ssm`, `S_c`, `S_r`, `b` and `b_r`.
fn split_state_terms(t: &StateTotals, d: Dtype, sd: Dtype, key: String) -> Vec<Term> {
    let (_, on_gpu, rec) = t.first;
    let [layers, b] = state_terms(t, d);
    vec![
        layers,
        Term::new(
            "S_c",
            "term_conv_state_elems",
            group(on_gpu - rec),
            "",
            Source::Derived("src_conv_state_per_layer".into()),
        ),
        Term::new(
            "S_r",
            "term_recurrent_state_elems",
            group(rec),
            "",
            Source::Derived("src_recurrent_state_per_layer".into()),
        ),
        b,
        Term::new(
            "b_r",
            "term_recurrent_state_bytes",
            fmt_sig(sd.bytes()),
            "B",
            Source::ConfigKey(key),
        ),
    ]
}

/// The recurrent state's own precision and the config key that names it, when it differs
/// from `d` ([`ModelDesc::ssm_state_dtype`]).
fn split_dtype(m: &ModelDesc, d: Dtype) -> Option<(Dtype, String)> {
    let sd = m.ssm_state_dtype.filter(|sd| *sd != d)?;
    let key = m
        .ledger
        .iter()
        .find(|e| e.field == "ssm_state_dtype")
        .and_then(|e| match &e.source {
            crate::model::desc::LedgerSource::Key(k) => Some(k.clone()),
            _ => None,
        })
        .unwrap_or_else(|| "mamba_ssm_cache_dtype".into());
    Some((sd, key))
}

/// A mixer's recurrent state elements on one of `tp` GPUs (its heads split `tp` ways, rounded
/// up), at most its whole state there.
fn recurrent_per_gpu(mixer: &Mixer, tp: u64) -> u64 {
    mixer
        .recurrent_state_elems()
        .div_ceil(tp.max(1))
        .min(state_elems_per_gpu(mixer, tp))
}

/// The recurrent state of each SSM / linear-attention layer, in model order, per sequence
/// on one of `tp` GPUs at precision `d` (the recurrent part in the config's precision where
/// it names one: the terms [`state_bytes`] sums).
pub fn state_bytes_per_layer(m: &ModelDesc, d: Dtype, tp: u64) -> Result<Vec<Bytes>, CalcError> {
    let ssm = split_dtype(m, d).map(|(sd, _)| sd);
    ssm_mixers(m)
        .map(|mixer| {
            let on_gpu = state_elems_per_gpu(mixer, tp);
            let bytes = match ssm {
                None => bits_to_bytes("ovf_state_bytes", on_gpu, d.bits())?,
                Some(sd) => {
                    let rec = recurrent_per_gpu(mixer, tp);
                    add(
                        "ovf_state_bytes",
                        &[
                            bits_to_bytes("ovf_state_bytes", on_gpu - rec, d.bits())?,
                            bits_to_bytes("ovf_state_bytes", rec, sd.bits())?,
                        ],
                    )?
                }
            };
            Ok(Bytes(bytes))
        })
        .collect()
}

/// The recurrent state of one sequence on one of `tp` GPUs with its conv part in `conv` and
/// its recurrent (SSM) part in `recurrent`, whatever the config names: what an engine that
/// picks the two precisions itself holds per request (SGLang's `mamba_cache_per_req`,
/// `configs/mamba_utils.py`: `(conv elements × conv bytes + SSM elements × SSM bytes) ×
/// layers`, the groups padded for TP as vLLM pads them, `extra_groups_for_head_shards`).
pub fn state_bytes_in(
    m: &ModelDesc,
    conv: Dtype,
    recurrent: Dtype,
    tp: u64,
) -> Result<Bytes, CalcError> {
    let mut total = 0u64;
    for mixer in ssm_mixers(m) {
        let on_gpu = state_elems_per_gpu(mixer, tp);
        let rec = recurrent_per_gpu(mixer, tp);
        total = add(
            "ovf_state_bytes",
            &[
                total,
                bits_to_bytes("ovf_state_bytes", on_gpu - rec, conv.bits())?,
                bits_to_bytes("ovf_state_bytes", rec, recurrent.bits())?,
            ],
        )?;
    }
    Ok(Bytes(total))
}

/// The mixer of each recurrent layer that keeps a state, in model order.
fn ssm_mixers(m: &ModelDesc) -> impl Iterator<Item = &Mixer> + '_ {
    m.layers
        .iter()
        .map(|l| &l.mixer)
        .filter(|mixer| whole_state_elems(mixer) > 0)
}

/// A mixer's recurrent state elements per sequence, before tensor parallelism (0 for
/// attention).
fn whole_state_elems(mixer: &Mixer) -> u64 {
    match *mixer {
        Mixer::Ssm { state_elems, .. } => state_elems,
        _ => 0,
    }
}
