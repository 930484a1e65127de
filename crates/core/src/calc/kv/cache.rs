//! KV bytes per token, per sequence and per batch over a model's layers, with their
//! derivation ([`per_token`], [`per_sequence`], [`per_batch`]).

use super::layer::{
    is_sparse_mla, kv_heads_per_rank, layer_elems_per_token, layer_fixed_bytes_per_token,
};
use crate::base::derivation::{binary_bytes_text, Derivation, Source, Term};
use crate::base::dtype::Dtype;
use crate::base::error::CalcError;
use crate::base::expr::Expr;
use crate::base::units::{fmt_sig, Bytes};
use crate::model::{Mixer, ModelDesc};

/// A byte count with its derivation.
#[derive(Debug, Clone, PartialEq)]
pub struct KvBytes {
    /// The bytes.
    pub bytes: Bytes,
    /// Formula, substituted values and result.
    pub derivation: Derivation,
}

/// How a group's layers write their elements per token.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// K and V of one head size: `2 × H_kv × d_head`.
    Mha,
    /// K and V of different head sizes: `(d_k + d_v) × H_kv`.
    Split,
    /// One latent: `(r_kv + d_rope)`.
    Mla,
}

/// Layers grouped by (elements per token, window, how the elements are written).
struct Group {
    count: u64,
    elems: u64,
    window: Option<u64>,
    /// One layer's elements per token on one GPU, in values.
    per_layer: Expr,
    kind: Kind,
}

fn groups(m: &ModelDesc, tp: u64) -> Result<Vec<Group>, CalcError> {
    let mut out: Vec<Group> = Vec::new();
    for l in m.kv_layers() {
        let (per_layer, kind, window) = match &l.mixer {
            Mixer::Attention {
                kv_heads,
                head_dim,
                v_head_dim,
                window,
                ..
            } => {
                let h = Expr::int(kv_heads_per_rank(*kv_heads, tp));
                let (d, dv) = (Expr::int(*head_dim), Expr::int(*v_head_dim));
                if head_dim == v_head_dim {
                    (Expr::mul([Expr::int(2), h, d]), Kind::Mha, *window)
                } else {
                    (Expr::mul([Expr::add([d, dv]), h]), Kind::Split, *window)
                }
            }
            Mixer::Mla {
                kv_lora_rank,
                qk_rope_head_dim,
                ..
            } => {
                let latent = [Expr::int(*kv_lora_rank), Expr::int(*qk_rope_head_dim)];
                (Expr::add(latent), Kind::Mla, None)
            }
            Mixer::Ssm { .. } => continue,
        };
        let elems = layer_elems_per_token(&l.mixer, tp)?;
        match out
            .iter_mut()
            .find(|g| g.elems == elems && g.window == window && g.per_layer == per_layer)
        {
            Some(g) => g.count += 1,
            None => out.push(Group {
                count: 1,
                elems,
                window,
                per_layer,
                kind,
            }),
        }
    }
    Ok(out)
}

/// The sparse-attention indexers of the cached layers, grouped by their bytes per token:
/// `(layers, bytes per token)` ([`layer_fixed_bytes_per_token`]).
fn indexer_groups(m: &ModelDesc) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for l in m.kv_layers() {
        let bytes = layer_fixed_bytes_per_token(&l.mixer);
        if bytes == 0 {
            continue;
        }
        match out.iter_mut().find(|g| g.1 == bytes) {
            Some(g) => g.0 += 1,
            None => out.push((1, bytes)),
        }
    }
    out
}

/// The indexers' bytes as one expression, `L_idx × d_idx (× T) (× B)` (every token kept: an
/// indexer attends to the whole sequence); `None` without indexers.
fn indexer_expression(ix: &[(u64, u64)], tokens: Option<u64>, batch: u64) -> Option<Expr> {
    if ix.is_empty() {
        return None;
    }
    let mut pattern = vec![symbol("L_idx"), symbol("d_idx")];
    pattern.extend(tokens.map(|_| symbol("T")));
    let terms = ix
        .iter()
        .map(|&(count, bytes)| {
            let mut xs = vec![Expr::int(count), Expr::int(bytes)];
            xs.extend(tokens.map(Expr::int));
            Expr::mul(xs)
        })
        .collect();
    let mut xs = vec![Expr::Sum {
        index: None,
        pattern: Box::new(Expr::mul(pattern)),
        terms,
    }];
    if batch > 1 {
        xs.push(Expr::sym("B", batch.to_string(), batch));
    }
    Some(Expr::mul(xs))
}

/// A symbol of the formula line only (a group's values stand for it).
fn symbol(s: &str) -> Expr {
    Expr::sym(s, "", 0)
}

/// One term of the sum in symbols, `T` (tokens) included when `tokens`: MLA's latent, MHA's
/// `2 × L × H_kv × d_head`, or, for a mix, `Σ_layers (d_k + d_v) × H_kv`.
fn pattern(gs: &[Group], tokens: bool) -> (Option<String>, Expr) {
    let mla = !gs.is_empty() && gs.iter().all(|g| g.kind == Kind::Mla);
    let mha = gs.iter().all(|g| g.kind == Kind::Mha);
    let (index, mut xs) = match (mla, mha) {
        (true, _) => {
            let latent = Expr::add([symbol("r_kv"), symbol("d_rope")]);
            (None, vec![symbol("L"), latent])
        }
        (_, true) => (
            None,
            vec![Expr::int(2), symbol("L"), symbol("H_kv"), symbol("d_head")],
        ),
        _ => {
            let kv = Expr::add([symbol("d_k"), symbol("d_v")]);
            (Some("layers".to_string()), vec![kv, symbol("H_kv")])
        }
    };
    if tokens {
        xs.push(symbol("T"));
    }
    (index, Expr::mul(xs))
}

/// The bytes as one expression: `(Σ_groups count × elems × tokens(group)) × B × b`, and
/// whether a window capped a group's tokens.
fn expression(gs: &[Group], kv: Dtype, tokens: Option<u64>, batch: u64) -> (Expr, bool) {
    let mut windowed = false;
    let terms: Vec<Expr> = gs
        .iter()
        .map(|g| {
            let mut xs = vec![Expr::int(g.count), g.per_layer.clone()];
            if let Some(t) = tokens {
                let t = match g.window {
                    Some(w) => {
                        windowed |= w < t;
                        t.min(w)
                    }
                    None => t,
                };
                xs.push(Expr::int(t));
            }
            Expr::mul(xs)
        })
        .collect();
    let (index, pattern) = pattern(gs, tokens.is_some());
    let mut tail = Vec::new();
    if batch > 1 {
        tail.push(Expr::sym("B", batch.to_string(), batch));
    }
    tail.push(Expr::element_bytes("b", kv.bits(), ""));
    let per_bytes = |sum: Expr| Expr::mul(std::iter::once(sum).chain(tail.iter().cloned()));
    let e = if terms.is_empty() {
        Expr::Zero {
            formula: Box::new(per_bytes(pattern)),
            because: "L_attn = 0".into(),
        }
    } else {
        per_bytes(Expr::Sum {
            index,
            pattern: Box::new(pattern),
            terms,
        })
    };
    (e, windowed)
}

/// Core: `⌈Σ_groups count × elems × tokens(group) × bits / 8⌉` with a derivation.
fn compute(
    m: &ModelDesc,
    kv: Dtype,
    tp: u64,
    tokens: Option<u64>,
    batch: u64,
    title: &str,
) -> Result<KvBytes, CalcError> {
    crate::calc::tp::check_model(m, tp)?;
    let gs = groups(m, tp)?;
    let ix = indexer_groups(m);
    let (e, windowed) = expression(&gs, kv, tokens, batch);
    let e = match indexer_expression(&ix, tokens, batch) {
        Some(i) => Expr::add([e, i]),
        None => e,
    };
    let bytes = e.exact("ovf_kv_bytes")?.ceil();
    Ok(KvBytes {
        bytes: Bytes(bytes),
        derivation: Derivation {
            result: binary_bytes_text(Bytes(bytes)),
            terms: terms(m, (&gs, &ix), kv, tp, tokens, batch),
            notes: notes(m, (&gs, &ix), kv, tp, windowed),
            ..Derivation::of(title, &e)
        },
    })
}

/// The inputs of [`compute`]'s derivation: `L`, `b`, the indexers' `L_idx` and `d_idx` when
/// there are any, then `T`, `B` and `t` where they count.
fn terms(
    m: &ModelDesc,
    (gs, ix): (&[Group], &[(u64, u64)]),
    kv: Dtype,
    tp: u64,
    tokens: Option<u64>,
    batch: u64,
) -> Vec<Term> {
    let b_text = fmt_sig(kv.bits() as f64 / 8.0);
    let layers: u64 = gs.iter().map(|g| g.count).sum();
    // A translation key when MTP layers are in (the UI translates a source that is a key).
    let layers_source = if m.kv_mtp_layers() > 0 {
        "src_attention_layers_with_mtp"
    } else {
        "src_attention_layers"
    };
    let mut terms = vec![
        Term::new(
            "L",
            "term_layers",
            layers.to_string(),
            "",
            Source::Derived(layers_source.into()),
        ),
        Term::new(
            "b",
            "term_kv_bytes",
            b_text,
            "B",
            Source::User(format!("kv_dtype = {kv}")),
        ),
    ];
    terms.extend(indexer_terms(ix));
    let user = |symbol: &str, key: &str, n: u64, unit: &str, field: &str| {
        Term::new(symbol, key, n.to_string(), unit, Source::User(field.into()))
    };
    terms.extend(tokens.map(|t| user("T", "term_tokens", t, "unit_tokens", "context")));
    if batch > 1 {
        terms.push(user("B", "term_batch", batch, "", "batch"));
    }
    if tp > 1 {
        terms.push(user("t", "term_tp", tp, "", "tp"));
    }
    terms
}

/// The sparse-attention indexers' terms, `L_idx` and `d_idx` (none without indexers; the
/// first group's width is shown).
fn indexer_terms(ix: &[(u64, u64)]) -> Vec<Term> {
    let Some(&(_, bytes)) = ix.first() else {
        return Vec::new();
    };
    let layers: u64 = ix.iter().map(|g| g.0).sum();
    let derived = |k: &str| Source::Derived(k.into());
    vec![
        Term::new(
            "L_idx",
            "term_indexer_layers",
            layers.to_string(),
            "",
            derived("src_indexer_layers"),
        ),
        Term::new(
            "d_idx",
            "term_indexer_bytes",
            bytes.to_string(),
            "B",
            derived("src_indexer_bytes"),
        ),
    ]
}

/// The notes of [`compute`]'s derivation.
fn notes(
    m: &ModelDesc,
    (gs, ix): (&[Group], &[(u64, u64)]),
    kv: Dtype,
    tp: u64,
    windowed: bool,
) -> Vec<String> {
    let mut notes = Vec::new();
    if windowed {
        notes.push("note_kv_window_cap".to_string());
    }
    if gs.iter().any(|g| g.kind == Kind::Mla) {
        notes.push("note_mla_no_x2".to_string());
    }
    if !ix.is_empty() {
        notes.push("note_kv_indexer".to_string());
    }
    // The figure keeps the plain fp8 latent; vLLM's layout depends on the GPU
    // ([`uses_fp8_ds_mla`]), which the blocks and concurrency per GPU apply.
    if kv == Dtype::Fp8 && is_sparse_mla(m) {
        notes.push("note_kv_fp8_ds_mla".to_string());
    }
    if tp > 1 {
        notes.push("note_kv_heads_per_rank".to_string());
    }
    if m.kv_mtp_layers() > 0 {
        notes.push("note_kv_mtp_layers".to_string());
    }
    notes
}

/// KV bytes per token over all attention layers (full-attention equivalent: windows not
/// applied), on one GPU under tensor parallelism `tp`.
pub fn per_token(m: &ModelDesc, kv: Dtype, tp: u64) -> Result<KvBytes, CalcError> {
    compute(m, kv, tp, None, 1, "kv_per_token")
}

/// KV bytes of one sequence of `tokens` tokens (sliding-window layers capped at the window).
pub fn per_sequence(m: &ModelDesc, kv: Dtype, tp: u64, tokens: u64) -> Result<KvBytes, CalcError> {
    compute(m, kv, tp, Some(tokens), 1, "kv_per_sequence")
}

/// KV bytes of `batch` sequences of `tokens` tokens each.
pub fn per_batch(
    m: &ModelDesc,
    kv: Dtype,
    tp: u64,
    tokens: u64,
    batch: u64,
) -> Result<KvBytes, CalcError> {
    compute(m, kv, tp, Some(tokens), batch.max(1), "kv_per_batch")
}
