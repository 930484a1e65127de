//! Teaching text beside each section: what the numbers show and why, in the course chapter's
//! terms (capacity → bandwidth → compute; decode is bandwidth-bound; the batch raises the
//! arithmetic intensity; the KV cache grows during generation until OOM), with the live numbers
//! of the current [`Report`] substituted.
//!
//! The sentences are templates in the translations (`explain_*` keys, in
//! `data/i18n/shell/derivations.toml`) with `{name}` placeholders, filled by
//! [`fill`](crate::base::i18n::fill). Numbers are computed here from the report only, so
//! the UI just renders the paragraphs.
//!
//! Formulas (WORKED_EXAMPLES.md §2–§5, the chapter's roofline section):
//! - ridge point = peak FLOP/s ÷ bandwidth B/s (L40S fp16: 362 TFLOP/s ÷ 864 GB/s ≈ 419);
//! - decode at batch 1 does 2 FLOP per weight read, so its intensity is 2 ÷ bytes per weight
//!   (1.0 FLOP/B in fp16), and batch B multiplies it by B: bandwidth-bound until
//!   B ≈ ridge ÷ (2 ÷ bytes per weight);
//! - prefill projection [s, h] × [h, h]: 2·s·h² FLOP over (b_w·h² + 2·2·s·h) bytes, which is
//!   s·h² ÷ (h² + 2·s·h) in half precision;
//! - a decode step reads the weights (and each request's KV cache) once: time ≥ bytes ÷ bandwidth.

use crate::base::derivation::group;
use crate::base::i18n::{fill, tr, Lang};
use crate::base::units::{fmt_sig, Bytes};
use crate::calc::roofline::Bound;
use crate::present::report::{GpuReport, Report};

/// A section of the results that carries an explanation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Section {
    /// Does it fit? (capacity first).
    Fit,
    /// KV cache size and its growth during generation.
    Kv,
    /// Concurrent requests (batch) from the memory left.
    Batch,
    /// Roofline: ridge point, prefill vs decode intensity.
    Roofline,
    /// Latency and throughput bounds of decode.
    Latency,
    /// Cost per request across GPUs.
    Cost,
    /// Capacity planning: replicas for the load.
    Planner,
}

impl Section {
    /// Every section, in page order.
    pub const ALL: &'static [Section] = &[
        Section::Fit,
        Section::Kv,
        Section::Batch,
        Section::Roofline,
        Section::Latency,
        Section::Cost,
        Section::Planner,
    ];

    /// Stable id, used in test ids (`explain-<id>`).
    pub const fn id(self) -> &'static str {
        match self {
            Section::Fit => "fit",
            Section::Kv => "kv",
            Section::Batch => "batch",
            Section::Roofline => "roofline",
            Section::Latency => "latency",
            Section::Cost => "cost",
            Section::Planner => "planner",
        }
    }

    /// Translation key of the explanation's heading.
    pub const fn title_key(self) -> &'static str {
        match self {
            Section::Fit => "explain_title_fit",
            Section::Kv => "explain_title_kv",
            Section::Batch => "explain_title_batch",
            Section::Roofline => "explain_title_roofline",
            Section::Latency => "explain_title_latency",
            Section::Cost => "explain_title_cost",
            Section::Planner => "explain_title_planner",
        }
    }
}

/// A value for a placeholder: text already formatted (numbers, names), or a translation key
/// (a word such as "bandwidth-bound" that must follow the language).
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    /// Literal text (a formatted number or a name).
    Text(String),
    /// A translation key, translated in the paragraph's language.
    Key(&'static str),
}

/// One paragraph before translation: the template key and its placeholder values.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// Translation key of the template (`explain_*`).
    pub key: &'static str,
    /// Placeholder name → value.
    pub vals: Vec<(&'static str, Val)>,
}

impl Part {
    fn new(key: &'static str, vals: Vec<(&'static str, Val)>) -> Part {
        Part { key, vals }
    }

    /// The paragraph in `lang`: the template with every placeholder filled.
    pub fn render(&self, lang: Lang) -> String {
        let vals: Vec<(&str, String)> = self
            .vals
            .iter()
            .map(|(n, v)| {
                let s = match v {
                    Val::Text(s) => s.clone(),
                    Val::Key(k) => tr(lang, k).to_string(),
                };
                (*n, s)
            })
            .collect();
        let pairs: Vec<(&str, &str)> = vals.iter().map(|(n, s)| (*n, s.as_str())).collect();
        fill(tr(lang, self.key), &pairs)
    }
}

/// The explanation of `section` for this report, one string per paragraph, in `lang`.
pub fn explain(section: Section, r: &Report, lang: Lang) -> Vec<String> {
    parts(section, r).iter().map(|p| p.render(lang)).collect()
}

/// [`explain`] for the sections an embedded widget's first answer shows (fit, KV, batch):
/// the same paragraphs, without linking the other sections' explanations (the embeds'
/// first-answer module, `present::first_embed`: 2.3 kB brotli less); empty for another section.
pub fn explain_widget(section: Section, r: &Report, lang: Lang) -> Vec<String> {
    let parts = match r.gpus.first() {
        Some(g) => widget_parts(section, r, g),
        None => vec![Part::new("explain_no_gpu", vec![])],
    };
    parts.iter().map(|p| p.render(lang)).collect()
}

/// The explanation of `section` before translation (templates and values).
pub fn parts(section: Section, r: &Report) -> Vec<Part> {
    let Some(g) = r.gpus.first() else {
        return vec![Part::new("explain_no_gpu", vec![])];
    };
    match section {
        // The first GPU with a published peak (an Apple GPU has none), else the first GPU.
        Section::Roofline => roofline(
            r,
            r.gpus
                .iter()
                .find(|x| ridge_of(r, x).1.is_some())
                .unwrap_or(g),
        ),
        Section::Latency => latency(r, g),
        Section::Cost => cost(r),
        Section::Planner => planner(r),
        Section::Fit | Section::Kv | Section::Batch => widget_parts(section, r, g),
    }
}

/// The explanation of the fit, KV or batch section (an embeddable widget's) on GPU `g`;
/// nothing for another section.
fn widget_parts(section: Section, r: &Report, g: &GpuReport) -> Vec<Part> {
    match section {
        Section::Fit => fit(r, g),
        Section::Kv => kv(r, g),
        Section::Batch => batch(r, g),
        _ => Vec::new(),
    }
}

fn t(s: impl Into<String>) -> Val {
    Val::Text(s.into())
}

fn gb(b: Bytes) -> Val {
    t(b.fmt_gb())
}

fn int(n: u64) -> Val {
    t(group(n))
}

/// A float with about four significant digits ("22.47", "419", "0.475"); a small one in
/// decimals with two significant digits ("0.0068", where a table writes "6.841e-3"), as prose
/// writes a ratio.
fn num(v: f64) -> Val {
    let a = v.abs();
    if a.is_finite() && a > 1e-9 && a < 0.01 {
        let decimals = (-a.log10()).floor() as usize + 2;
        let s = format!("{v:.decimals$}");
        return t(s.trim_end_matches('0').trim_end_matches('.').to_string());
    }
    t(fmt_sig(v))
}

/// A rounded count ("≈ 419 requests" style), grouped: 1365.4 → "1,365".
fn round_int(v: f64) -> Val {
    if (0.0..1e18).contains(&v) {
        int(v.round() as u64)
    } else {
        t("—")
    }
}

fn fit(r: &Report, g: &GpuReport) -> Vec<Part> {
    let b = &g.bar;
    let name = || t(g.accelerator.name.clone());
    if b.weights > b.capacity {
        return vec![Part::new(
            "explain_fit_weights_over",
            vec![
                ("weights_gpu", gb(b.weights)),
                ("gpu", name()),
                ("capacity", gb(b.capacity)),
            ],
        )];
    }
    let mut out = vec![Part::new(
        if r.tp > 1 {
            "explain_fit_capacity_tp"
        } else {
            "explain_fit_capacity"
        },
        vec![
            ("weights", gb(r.weights)),
            ("tp", int(r.tp)),
            ("weights_gpu", gb(b.weights)),
            ("gpu", name()),
            ("capacity", gb(b.capacity)),
            ("left", gb(b.capacity.saturating_sub(b.weights))),
        ],
    )];
    let common = vec![
        ("concurrency", int(r.concurrency)),
        ("context", int(r.context_len)),
        ("gpu", name()),
        ("used", gb(b.used())),
    ];
    if b.fits() {
        let mut v = common;
        v.push(("free", gb(b.free)));
        out.push(Part::new("explain_fit_fits", v));
    } else {
        let mut v = common;
        v.push(("over", gb(b.over)));
        out.push(Part::new("explain_fit_over", v));
    }
    out
}

/// Tokens per request at which the KV cache of `concurrency` requests fills what the weights,
/// activations and overhead leave on one GPU: budget × context ÷ KV(concurrency × context).
fn oom_tokens(r: &Report, g: &GpuReport) -> Option<u64> {
    let b = &g.bar;
    if b.kv.0 == 0 || r.concurrency == 0 {
        return None;
    }
    let budget = b
        .capacity
        .saturating_sub(b.weights)
        .saturating_sub(b.activations)
        .saturating_sub(b.overhead);
    let tokens = u128::from(budget.0) * u128::from(r.context_len) / u128::from(b.kv.0);
    u64::try_from(tokens).ok()
}

fn kv(r: &Report, g: &GpuReport) -> Vec<Part> {
    let ratio = if r.weights.0 > 0 {
        r.kv_total.0 as f64 / r.weights.0 as f64
    } else {
        0.0
    };
    let mut out = vec![Part::new(
        "explain_kv_size",
        vec![
            (
                "kv_token",
                t(format!("{} MiB", fmt_sig(r.kv_per_token.mib()))),
            ),
            ("context", int(r.context_len)),
            ("kv_request", gb(r.kv_per_request)),
            ("concurrency", int(r.concurrency)),
            ("kv_total", gb(r.kv_total)),
            ("ratio", num(ratio)),
            ("weights", gb(r.weights)),
        ],
    )];
    out.push(Part::new("explain_kv_grows", vec![]));
    if let Some(tok) = oom_tokens(r, g) {
        let key = if tok >= r.context_len {
            "explain_kv_oom_after"
        } else {
            "explain_kv_oom_before"
        };
        out.push(Part::new(
            key,
            vec![
                ("gpu", t(g.accelerator.name.clone())),
                ("concurrency", int(r.concurrency)),
                ("oom_tokens", int(tok)),
                ("context", int(r.context_len)),
            ],
        ));
    }
    out
}

/// The checkpoint's average bytes per parameter (weights ÷ parameters; 2.0 when unknown): the
/// right figure for a whole-model pass, which reads the unquantized embeddings and norms too.
/// One linear weight's size is [`crate::model::WeightFormat::bytes_per_element`].
fn avg_bytes_per_param(r: &Report) -> f64 {
    let p = r.model.params.total;
    if p > 0 && r.weights.0 > 0 {
        r.weights.0 as f64 / p as f64
    } else {
        2.0
    }
}

/// Decode intensity at batch 1: 2 FLOP per weight ÷ bytes per weight (FLOP/B).
fn decode_intensity(r: &Report) -> f64 {
    2.0 / avg_bytes_per_param(r)
}

fn batch(r: &Report, g: &GpuReport) -> Vec<Part> {
    let kv_req = if r.concurrency > 0 && g.bar.kv.0 > 0 {
        Bytes(g.bar.kv.0 / r.concurrency)
    } else {
        r.kv_per_request
    };
    let d1 = decode_intensity(r);
    let mut out = vec![Part::new(
        "explain_batch_count",
        vec![
            ("gpu", t(g.accelerator.name.clone())),
            ("weights_gpu", gb(g.bar.weights)),
            ("theoretical", int(g.requests_theoretical)),
            ("practical", int(g.requests_practical)),
            ("kv_request", gb(kv_req)),
        ],
    )];
    if g.requests > 1 {
        out.push(Part::new(
            "explain_batch_intensity",
            vec![
                ("batch", int(g.requests)),
                ("batch_int", num(d1 * g.requests as f64)),
                ("decode_int", num(d1)),
            ],
        ));
    }
    out
}

/// The precision the GPU computes at for this report, and its ridge point (FLOP/B), if known.
fn ridge_of(r: &Report, g: &GpuReport) -> (crate::base::dtype::Dtype, Option<f64>) {
    let (d, _) = g
        .accelerator
        .compute_precision(r.weight_dtype, r.model.weights.base);
    (
        d,
        g.accelerator.ridge(d).filter(|x| x.is_finite() && *x > 0.0),
    )
}

/// Prefill projection intensity (FLOP/B) for `s` tokens at hidden size `h`, weights at `bw`
/// bytes each and 2-byte activations: 2·s·h² ÷ (b_w·h² + 4·s·h).
fn prefill_intensity(s: u64, h: u64, bw: f64) -> f64 {
    let (s, h) = (s as f64, h as f64);
    2.0 * s * h * h / (bw * h * h + 4.0 * s * h)
}

fn roofline(r: &Report, g: &GpuReport) -> Vec<Part> {
    let acc = &g.accelerator;
    let (dtype, ridge) = ridge_of(r, g);
    let (Some(ridge), Some(peak)) = (ridge, acc.peak_flops(dtype)) else {
        return vec![Part::new(
            "explain_roof_no_peak",
            vec![("gpu", t(acc.name.clone())), ("dtype", t(dtype.id()))],
        )];
    };
    let mut out = vec![Part::new(
        "explain_roof_ridge",
        vec![
            ("gpu", t(acc.name.clone())),
            ("peak", num(peak.tflops())),
            ("dtype", t(dtype.id())),
            ("bw", num(acc.bandwidth.gbps())),
            ("ridge", round_int(ridge)),
        ],
    )];
    let d1 = decode_intensity(r);
    out.push(Part::new(
        "explain_roof_decode",
        vec![("decode_int", num(d1)), ("ridge", round_int(ridge))],
    ));
    let h = r.model.hidden_size;
    if h > 0 {
        let pi = prefill_intensity(r.context_len, h, avg_bytes_per_param(r));
        out.push(Part::new(
            "explain_roof_prefill",
            vec![
                ("context", int(r.context_len)),
                ("hidden", int(h)),
                ("prefill_int", num(pi)),
                (
                    "bound",
                    Val::Key(match Bound::at(pi, ridge) {
                        Bound::Compute => "explain_word_compute_bound",
                        Bound::Memory => "explain_word_bandwidth_bound",
                    }),
                ),
            ],
        ));
    }
    out
}

/// Weight bytes one GPU reads per decode step: its share, scaled to the active parameters
/// (MoE reads only the routed experts).
fn weights_read_per_step(r: &Report, g: &GpuReport) -> Bytes {
    let p = &r.model.params;
    if p.total > 0 && p.active > 0 && p.active < p.total {
        Bytes((g.bar.weights.0 as f64 * p.active as f64 / p.total as f64) as u64)
    } else {
        g.bar.weights
    }
}

fn latency(r: &Report, g: &GpuReport) -> Vec<Part> {
    let acc = &g.accelerator;
    let bw = acc.bandwidth.0;
    let w = weights_read_per_step(r, g);
    if bw <= 0.0 || w.0 == 0 {
        return vec![Part::new("explain_latency_unknown", vec![])];
    }
    let t1 = w.0 as f64 / bw;
    let mut out = vec![Part::new(
        "explain_latency_decode",
        vec![
            ("weights_read", gb(w)),
            ("bw", num(acc.bandwidth.gbps())),
            ("t_ms", num(t1 * 1e3)),
            ("tps", num(1.0 / t1)),
            ("gpu", t(acc.name.clone())),
        ],
    )];
    if let (_, Some(ridge)) = ridge_of(r, g) {
        out.push(Part::new(
            "explain_latency_cross",
            vec![("cross", round_int(ridge / decode_intensity(r)))],
        ));
    }
    let batch = g.requests.min(r.concurrency);
    if batch > 1 && r.concurrency > 0 {
        // Each request's KV cache on this GPU, at the full context (the end of generation).
        let kv_req = g.bar.kv.0 as f64 / r.concurrency as f64;
        let step = (w.0 as f64 + batch as f64 * kv_req) / bw;
        out.push(Part::new(
            "explain_latency_batch",
            vec![
                ("batch", int(batch)),
                ("step_ms", num(step * 1e3)),
                ("total_tps", round_int(batch as f64 / step)),
            ],
        ));
    }
    out
}

fn cost(r: &Report) -> Vec<Part> {
    let priced: Vec<(&GpuReport, f64, f64)> = r
        .gpus
        .iter()
        .filter_map(|g| Some((g, g.usd_per_hour?, g.usd_per_request_hour?)))
        .collect();
    let best = r
        .cheapest
        .and_then(|i| r.gpus.get(i))
        .and_then(|g| priced.iter().find(|(x, _, _)| x.key == g.key))
        .or_else(|| priced.first());
    let Some(&(a, pa, ca)) = best else {
        return vec![Part::new("explain_cost_no_price", vec![])];
    };
    let worst = priced
        .iter()
        .filter(|(x, _, _)| x.key != a.key)
        .max_by(|x, y| x.2.total_cmp(&y.2));
    let mut out = vec![Part::new(
        "explain_cost_one",
        vec![
            ("gpu", t(a.accelerator.name.clone())),
            ("price", num(pa)),
            ("requests", int(a.requests)),
            ("per_req", num(ca)),
        ],
    )];
    if let Some(&(b, pb, cb)) = worst {
        if pb > 0.0 && b.requests > 0 && cb > 0.0 {
            out.push(Part::new(
                "explain_cost_compare",
                vec![
                    ("a", t(a.accelerator.name.clone())),
                    ("b", t(b.accelerator.name.clone())),
                    ("price_ratio", num(pa / pb)),
                    ("req_ratio", num(a.requests as f64 / b.requests as f64)),
                    ("cost_ratio", num(ca / cb)),
                ],
            ));
        }
    }
    out
}

fn planner(r: &Report) -> Vec<Part> {
    let g = r
        .cheapest
        .and_then(|i| r.gpus.get(i))
        .or_else(|| r.gpus.iter().find(|g| g.requests > 0))
        .or_else(|| r.gpus.first());
    let Some(g) = g else {
        return vec![Part::new("explain_no_gpu", vec![])];
    };
    let mut out = vec![Part::new("explain_planner_little", vec![])];
    if g.requests == 0 {
        out.push(Part::new(
            "explain_planner_no_fit",
            vec![("gpu", t(g.accelerator.name.clone()))],
        ));
        return out;
    }
    let replicas = r.concurrency.div_ceil(g.requests).max(1);
    out.push(Part::new(
        "explain_planner_replicas",
        vec![
            ("gpu", t(g.accelerator.name.clone())),
            ("tp", int(r.tp)),
            ("requests", int(g.requests)),
            ("concurrency", int(r.concurrency)),
            ("replicas", int(replicas)),
        ],
    ));
    if let Some(p) = g.usd_per_hour {
        out.push(Part::new(
            "explain_planner_cost",
            vec![
                ("replicas", int(replicas)),
                ("cost_h", num(p * replicas as f64)),
            ],
        ));
    }
    out.push(Part::new("explain_planner_peak", vec![]));
    out
}

#[cfg(test)]
mod tests {
    /// Prose writes a small ratio in decimals, with two significant digits.
    #[test]
    fn small_ratios_in_decimals() {
        let shown = |v: f64| match num(v) {
            Val::Text(s) => s,
            other => panic!("{other:?}"),
        };
        assert_eq!(shown(0.006841), "0.0068");
        assert_eq!(shown(0.0001), "0.0001");
        assert_eq!(shown(-0.0042), "-0.0042");
        assert_eq!(shown(0.475), fmt_sig(0.475));
        assert_eq!(shown(2.55), fmt_sig(2.55));
        assert_eq!(shown(0.0), "0");
    }

    use super::*;
    use crate::base::i18n::{entries, placeholders};
    use crate::hardware::catalog::Catalog;
    use crate::present::report::evaluate;
    use crate::present::report::report_for_test as report;
    use crate::scenario::{GpuChoice, ModelSource, Scenario};
    use std::collections::BTreeSet;

    fn scenarios() -> Vec<Scenario> {
        let base = Scenario::default();
        let mut v = vec![base.clone()];
        // Does not fit: many long requests on the A10G alone.
        let mut s = base.clone();
        s.context_len = 32_768;
        s.concurrency = 64;
        s.gpus = vec![GpuChoice::Catalog("a10g".into())];
        v.push(s);
        // Weights alone do not fit.
        let mut s = base.clone();
        s.model = ModelSource::Quick {
            params: 200_000_000_000,
            dtype: crate::base::dtype::Dtype::Bf16,
        };
        v.push(s);
        // Two GPUs per replica.
        let mut s = base.clone();
        s.tp = 2;
        v.push(s);
        // No GPU at all.
        let mut s = base.clone();
        s.gpus = vec![];
        v.push(s);
        // Every preset on an H100.
        for p in crate::model::presets::all() {
            let mut s = base.clone();
            s.model = ModelSource::Preset(p.id.to_string());
            s.gpus = vec![GpuChoice::Catalog("h100-sxm".into())];
            v.push(s);
        }
        v
    }

    /// The embeds' entry writes the paragraphs the full one writes for the three widgets'
    /// sections (every scenario above, both languages), and nothing for the others.
    #[test]
    fn widget_explanations_match_the_full_ones() {
        for s in scenarios() {
            let r = report(&s);
            for lang in [Lang::En, Lang::Ko] {
                for section in [Section::Fit, Section::Kv, Section::Batch] {
                    assert_eq!(
                        explain_widget(section, &r, lang),
                        explain(section, &r, lang)
                    );
                }
                if !r.gpus.is_empty() {
                    assert!(explain_widget(Section::Roofline, &r, lang).is_empty());
                }
            }
        }
    }

    #[test]
    fn fill_replaces_named_placeholders_only() {
        assert_eq!(fill("{a} and {b}", &[("a", "1"), ("b", "2")]), "1 and 2");
        // A value that looks like a placeholder is not expanded again.
        assert_eq!(fill("{a}{b}", &[("a", "{b}"), ("b", "x")]), "{b}x");
        assert_eq!(fill("{missing} {", &[]), "{missing} {");
        assert_eq!(placeholders("x {a} y {bb}"), vec!["a", "bb"]);
    }

    #[test]
    fn explain_templates_have_the_same_placeholders_in_both_languages() {
        let mut n = 0;
        for (k, en, ko) in entries()
            .into_iter()
            .filter(|(k, _, _)| k.starts_with("explain_"))
        {
            let a: BTreeSet<&str> = placeholders(en).into_iter().collect();
            let b: BTreeSet<&str> = placeholders(ko).into_iter().collect();
            assert_eq!(a, b, "{k}: placeholders differ between English and Korean");
            n += 1;
        }
        assert!(n >= 25, "only {n} explain_* templates");
        for s in Section::ALL {
            assert!(crate::base::i18n::has(s.title_key()), "{}", s.title_key());
        }
    }

    #[test]
    fn every_placeholder_is_filled_in_both_languages() {
        let mut used = BTreeSet::new();
        let mut reports: Vec<Report> = scenarios()
            .iter()
            .filter_map(|s| evaluate(s, Catalog::builtin()).ok())
            .collect();
        // A GPU whose bandwidth is unknown (not reachable through the catalog's validation).
        let mut odd = report(&Scenario::default());
        for g in &mut odd.gpus {
            g.accelerator.bandwidth = crate::base::units::BytesPerSecond(0.0);
        }
        reports.push(odd);
        for r in reports {
            for sec in Section::ALL {
                let ps = parts(*sec, &r);
                assert!(!ps.is_empty());
                for p in &ps {
                    assert!(crate::base::i18n::has(p.key), "no template {}", p.key);
                    used.insert(p.key);
                    for lang in Lang::ALL {
                        let text = p.render(*lang);
                        assert!(
                            !text.contains('{') && !text.contains('}'),
                            "{}: unfilled placeholder in {lang:?}: {text}",
                            p.key
                        );
                        assert!(!text.contains("missing translation"), "{text}");
                    }
                }
            }
        }
        // Every explain_ template (other than titles and words) is reachable.
        for (k, _, _) in entries() {
            if k.starts_with("explain_")
                && !k.starts_with("explain_title_")
                && !k.starts_with("explain_word_")
            {
                assert!(used.contains(k), "{k} is never produced");
            }
        }
    }

    #[test]
    fn numbers_come_from_the_report() {
        let r = report(&Scenario::default());
        let a10g = &r.gpus[0];
        let fit = explain(Section::Fit, &r, Lang::En).join(" ");
        assert!(fit.contains(&r.weights.fmt_gb()), "{fit}");
        assert!(fit.contains(&a10g.bar.capacity.fmt_gb()), "{fit}");
        let batch = explain(Section::Batch, &r, Lang::Ko).join(" ");
        assert!(batch.contains(&a10g.requests_theoretical.to_string()));
        assert!(batch.contains(&a10g.requests_practical.to_string()));
        // Decode time per token on the A10G: weight bytes ÷ bandwidth, computed from the
        // report's numbers (Llama-2-7b fp16: 13.48 GB ÷ 600 GB/s ≈ 22.46 ms).
        let lat = explain(Section::Latency, &r, Lang::En).join(" ");
        let t_ms = a10g.bar.weights.0 as f64 / a10g.accelerator.bandwidth.0 * 1e3;
        assert!(lat.contains(&fmt_sig(t_ms)), "{lat}");
        assert!(lat.contains(&a10g.bar.weights.fmt_gb()), "{lat}");
        // Roofline: the L40S ridge ≈ 419 FLOP/B from the catalog's peak and bandwidth.
        let s = Scenario {
            gpus: vec![GpuChoice::Catalog("l40s".into())],
            ..Scenario::default()
        };
        let r2 = report(&s);
        let l = &r2.gpus[0].accelerator;
        let ridge = l.ridge(crate::base::dtype::Dtype::Fp16).unwrap_or(0.0);
        let roof = explain(Section::Roofline, &r2, Lang::Ko).join(" ");
        assert!(roof.contains(&group(ridge.round() as u64)), "{roof}");
        // With a GPU without a published peak first (Apple M4 Max), the L40S's ridge is
        // explained.
        let r3 = report(&Scenario {
            gpus: vec![
                GpuChoice::Catalog("m4-max".into()),
                GpuChoice::Catalog("l40s".into()),
            ],
            ..Scenario::default()
        });
        let roof = explain(Section::Roofline, &r3, Lang::En).join(" ");
        assert!(roof.contains(&group(ridge.round() as u64)), "{roof}");
        assert!(roof.contains(&l.name), "{roof}");
        // Cost: the comparison's ratios are the report's prices and requests.
        let cost = explain(Section::Cost, &r, Lang::En).join(" ");
        let (a, b) = (&r.gpus[1], &r.gpus[0]); // L40S cheapest per request
        let req_ratio = a.requests as f64 / b.requests as f64;
        assert!(cost.contains(&fmt_sig(req_ratio)), "{cost}");
        assert!(cost.contains(&a.accelerator.name));
    }

    #[test]
    fn oom_point_moves_with_the_inputs() {
        // More concurrent requests run out of memory at fewer tokens each.
        let mut s = Scenario {
            gpus: vec![GpuChoice::Catalog("l40s".into())],
            concurrency: 4,
            ..Scenario::default()
        };
        let r4 = report(&s);
        s.concurrency = 8;
        let r8 = report(&s);
        let (a, b) = (
            oom_tokens(&r4, &r4.gpus[0]).unwrap_or(0),
            oom_tokens(&r8, &r8.gpus[0]).unwrap_or(0),
        );
        assert!(a > b && b > 0, "{a} {b}");
        // KV fills the budget at the OOM point: tokens × concurrency × per-token KV ≈ budget.
        let g = &r4.gpus[0];
        let budget = g.bar.capacity.0 - g.bar.weights.0 - g.bar.activations.0 - g.bar.overhead.0;
        let per_tok_all = g.bar.kv.0 as f64 / r4.context_len as f64;
        assert!((a as f64 * per_tok_all - budget as f64).abs() <= per_tok_all);
    }

    #[test]
    fn prefill_intensity_matches_the_chapter_formula() {
        // Half precision: s·h·h ÷ (s·h + s·h + h·h) (chapter, "prefill과 decode").
        let (s, h) = (1024.0_f64, 4096.0_f64);
        let chapter = s * h * h / (2.0 * s * h + h * h);
        assert!((prefill_intensity(1024, 4096, 2.0) - chapter).abs() < 1e-9);
        // Decode (s = 1) stays near 1.
        assert!(prefill_intensity(1, 4096, 2.0) < 1.0);
    }
}
