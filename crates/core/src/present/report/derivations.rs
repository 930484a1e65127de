//! The derivations a report shows besides those of the calculations it calls: the parameter
//! count, the KV cache per token when the layers differ, per request and in total, and the
//! cost per request.

use crate::base::derivation::{bytes_text, group, Derivation, Source, Term};
use crate::base::dtype::Dtype;
use crate::base::expr::Expr;
use crate::base::units::{fmt_sig, Bytes};
use crate::hardware::catalog::Accelerator;
use crate::model::{Mixer, ModelDesc};

/// A derivation with its title only: where a report's math is not shown, it still says
/// which derivations the full report has.
pub(super) fn titled(title_key: &str) -> Derivation {
    Derivation {
        title_key: title_key.into(),
        ..Default::default()
    }
}

/// The parameter count's derivation: the sum of the model's parts.
pub(super) fn params_derivation(model: &ModelDesc) -> Derivation {
    let p = &model.params;
    let parts = [
        ("P_emb", "term_p_emb", p.embeddings + p.position_embeddings),
        ("P_attn", "term_p_attn", p.attention),
        ("P_mlp", "term_p_mlp", p.mlp),
        ("P_exp", "term_p_exp", p.experts),
        ("P_router", "term_p_router", p.router),
        ("P_norm", "term_p_norm", p.norms),
        ("P_head", "term_p_head", p.lm_head),
        ("P_other", "term_p_other", p.ssm + p.other),
    ];
    let e = Expr::named(
        "P",
        Expr::add(
            parts
                .iter()
                .map(|(sym, _, n)| Expr::sym(sym, group(*n), *n)),
        ),
    );
    // The result is the model's own total, not this sum: a quick-mode model has a total
    // without its parts, and a checkpoint's MTP module is left out of the total alone.
    Derivation {
        result: group(model.params.total),
        terms: parts
            .iter()
            .map(|(sym, key, n)| {
                Term::new(
                    sym,
                    key,
                    group(*n),
                    "",
                    Source::Derived("params_total".into()),
                )
            })
            .collect(),
        ..Derivation::of("params_total", &e)
    }
}

/// KV per token, whole model, with the textbook formula when every layer is alike.
pub(super) fn kv_token_derivation(m: &ModelDesc, kv: Dtype, per_token: Bytes) -> Derivation {
    let attn = attention_shapes(m);
    let uniform = attn
        .first()
        .filter(|f| attn.iter().all(|x| x == *f) && f.1 == f.2);
    let result = format!("{} B = {}", group(per_token.0), per_token.fmt_gib());
    let b_term = Term::new(
        "b",
        "term_bytes_per_kv",
        fmt_sig(kv.bytes()),
        "B",
        Source::User("kv_dtype".into()),
    );
    match uniform {
        Some(&(kvh, hd, _)) if attn.len() == m.layers.len() => {
            uniform_kv_token((attn.len() as u64, kvh, hd), kv, b_term, result)
        }
        _ => mixed_kv_token(attn.len(), kv, b_term, result),
    }
}

/// The KV heads, key head size and value head size of each attention layer, in model order.
fn attention_shapes(m: &ModelDesc) -> Vec<(u64, u64, u64)> {
    m.layers
        .iter()
        .filter_map(|l| match l.mixer {
            Mixer::Attention {
                kv_heads,
                head_dim,
                v_head_dim,
                ..
            } => Some((kv_heads, head_dim, v_head_dim)),
            _ => None,
        })
        .collect()
}

/// KV per token of `layers` alike attention layers of `kvh` KV heads of `hd`: `KV_token = 2 ×
/// L × H_kv × d_head × b`.
fn uniform_kv_token(
    (layers, kvh, hd): (u64, u64, u64),
    kv: Dtype,
    b_term: Term,
    result: String,
) -> Derivation {
    let count = |symbol: &str, n: u64| Expr::sym(symbol, n.to_string(), n);
    let e = Expr::named(
        "KV_token",
        Expr::mul([
            Expr::int(2),
            count("L", layers),
            count("H_kv", kvh),
            count("d_head", hd),
            Expr::element_bytes("b", kv.bits(), ""),
        ]),
    );
    let config = |symbol: &str, key: &str, n: u64, source: Source| {
        Term::new(symbol, key, n.to_string(), "", source)
    };
    let config_key = |k: &str| Source::ConfigKey(k.into());
    Derivation {
        result,
        terms: vec![
            config("L", "term_layers", layers, config_key("num_hidden_layers")),
            config(
                "H_kv",
                "term_kv_heads",
                kvh,
                config_key("num_key_value_heads"),
            ),
            config(
                "d_head",
                "term_head_dim",
                hd,
                Source::Derived("hidden_size / num_attention_heads".into()),
            ),
            b_term,
        ],
        ..Derivation::of("kv_per_token", &e)
    }
}

/// KV per token of `layers` attention layers that differ: `KV_token = Σ_(ℓ = 1…L) (K_ℓ + V_ℓ)
/// × b`.
fn mixed_kv_token(layers: usize, kv: Dtype, b_term: Term, result: String) -> Derivation {
    // Each layer's keys and values, named, not listed.
    let per_layer = |symbol: &str| Expr::sym(symbol, symbol, f64::NAN);
    let e = Expr::named(
        "KV_token",
        Expr::mul([
            Expr::Series {
                var: "ℓ".into(),
                count: Box::new(Expr::sym("L", layers.to_string(), layers as u64)),
                body: Box::new(Expr::add([per_layer("K_ℓ"), per_layer("V_ℓ")])),
            },
            Expr::element_bytes("b", kv.bits(), ""),
        ]),
    );
    Derivation {
        result,
        terms: vec![
            Term::new(
                "L",
                "term_kv_layers",
                layers.to_string(),
                "",
                Source::Derived("ldg_layers_with_kv".into()),
            ),
            b_term,
        ],
        notes: vec!["note_kv_mixed_layers".into()],
        ..Derivation::of("kv_per_token", &e)
    }
}

/// KV of one request: KV per token times the context length (noted when a window or a state
/// makes it differ).
pub(super) fn kv_request_derivation(
    kv_per_token: Bytes,
    kv_per_request: Bytes,
    ctx: u64,
) -> Derivation {
    let e = Expr::named(
        "KV_req",
        Expr::mul([
            Expr::sym(
                "KV_token",
                format!("{} B", group(kv_per_token.0)),
                kv_per_token.0,
            ),
            Expr::sym("S", group(ctx), ctx),
        ]),
    );
    // The result is the cache's own count (a window or a state makes it differ, noted).
    Derivation {
        result: bytes_text(kv_per_request, false),
        terms: vec![
            Term::new(
                "KV_token",
                "kv_per_token",
                group(kv_per_token.0),
                "B",
                Source::Derived("kv_per_token".into()),
            ),
            Term::new(
                "S",
                "term_context_len",
                group(ctx),
                "unit_tokens",
                Source::User("context_len".into()),
            ),
        ],
        notes: if kv_per_request == kv_per_token * ctx {
            vec![]
        } else {
            vec!["note_kv_window_or_state".into()]
        },
        ..Derivation::of("kv_per_request", &e)
    }
}

/// KV of all requested concurrent requests: KV per request times the concurrency.
pub(super) fn kv_total_derivation(
    kv_per_request: Bytes,
    kv_total: Bytes,
    concurrency: u64,
) -> Derivation {
    let e = kv_total_expr(kv_per_request, concurrency);
    Derivation {
        result: bytes_text(kv_total, false),
        terms: vec![Term::new(
            "N",
            "term_concurrency",
            group(concurrency),
            "",
            Source::User("concurrency".into()),
        )],
        ..Derivation::of("kv_total", &e)
    }
}

/// `KV = KV_req × N`. The report's figure is the KV profile's (`per_batch`, the same
/// product, saturating), computed also where no derivation is built (the first screen).
fn kv_total_expr(kv_per_request: Bytes, concurrency: u64) -> Expr {
    Expr::named(
        "KV",
        Expr::mul([
            Expr::sym(
                "KV_req",
                format!("{} B", group(kv_per_request.0)),
                kv_per_request.0,
            ),
            Expr::sym("N", group(concurrency), concurrency),
        ]),
    )
}

/// Price per request slot: the replica's price `p` (US dollars per hour) over `requests`.
pub(super) fn cost_derivation(
    acc: &Accelerator,
    p: f64,
    c: f64,
    tp: u64,
    requests: u64,
) -> Derivation {
    let e = cost_expr(p, tp, requests);
    Derivation {
        result: format!("${} /h", fmt_sig(c)),
        terms: vec![
            Term::new(
                "price",
                "term_price",
                fmt_sig(p / tp as f64),
                "USD/h",
                Source::Catalog(
                    acc.price
                        .as_ref()
                        .map(|x| x.source.clone())
                        .unwrap_or_default(),
                ),
            ),
            Term::new(
                "N",
                "term_requests",
                requests.to_string(),
                "",
                Source::Derived("card_max_requests".into()),
            ),
        ],
        ..Derivation::of("cost_per_request", &e)
    }
}

/// `c = price × TP / N` for a replica of `tp` GPUs costing `p` dollars an hour in all.
fn cost_expr(p: f64, tp: u64, requests: u64) -> Expr {
    let price = p / tp as f64;
    Expr::named(
        "c",
        Expr::over(
            Expr::mul([
                Expr::sym("price", format!("${}", fmt_sig(price)), price),
                Expr::sym("TP", tp.to_string(), tp),
            ]),
            Expr::sym("N", requests.to_string(), requests),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b_term() -> Term {
        Term::new(
            "b",
            "term_bytes_per_kv",
            "2".into(),
            "B",
            Source::User("kv".into()),
        )
    }

    /// Layers that differ: the sum is named, not listed, its bound substituted.
    #[test]
    fn mixed_layers_print_the_sum_with_its_bound() {
        let d = mixed_kv_token(3, Dtype::Bf16, b_term(), "1 B".into());
        assert_eq!(d.formula, "KV_token = Σ_(ℓ = 1…L) (K_ℓ + V_ℓ) × b");
        assert_eq!(d.substituted, "Σ_(ℓ = 1…3) (K_ℓ + V_ℓ) × 2");
        let d = mixed_kv_token(40, Dtype::Fp4, b_term(), "1 B".into());
        assert_eq!(d.substituted, "Σ_(ℓ = 1…40) (K_ℓ + V_ℓ) × 0.5");
    }

    /// The report keeps its own figures (the price per request `p / N`, which the GPU's
    /// report holds whether or not its math is built; the KV of `N` requests as the cache
    /// counts them); the formulas compute the same numbers.
    #[test]
    fn formulas_agree_with_the_reported_figures() {
        for (p, tp, n) in [(3.5, 1, 7), (98.32, 8, 123), (0.9, 2, 1)] {
            let c: f64 = p / n as f64;
            let e = cost_expr(p, tp, n);
            assert!((e.eval() - c).abs() <= 1e-12 * c, "{p} {tp} {n}");
            assert_eq!(fmt_sig(e.eval()), fmt_sig(c));
        }
        let e = cost_expr(2.0, 1, 4);
        assert_eq!(e.formula(), "c = price × TP / N");
        assert_eq!(e.values(), "$2 × 1 / 4");
        let d = kv_total_derivation(Bytes(131_072), Bytes(131_072 * 12), 12);
        assert_eq!(d.formula, "KV = KV_req × N");
        assert_eq!(d.substituted, "131,072 B × 12");
        for (per, n) in [(131_072, 12), (7, 1), (0, 64)] {
            let e = kv_total_expr(Bytes(per), n);
            assert_eq!(
                e.exact("ovf_kv_bytes").map(|r| Bytes(r.ceil())),
                Ok(Bytes(per) * n)
            );
        }
    }
}
