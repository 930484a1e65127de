//! The first screen's text: every string the summary cards and the fit table show for a
//! report, in one language. The page's components bind these fields to their markup
//! (`ui::summary_cards`, `ui::fit_table`); built here, outside the web code, so they are
//! tested natively and anything else that paints the first screen shows the same text.

use crate::base::derivation::Derivation;
use crate::base::error::Phrase;
use crate::base::i18n::{fill, tr, Lang};
use crate::base::units::{fmt_eok, Bytes, NumberSymbols};
use crate::calc::memory::Suggestion;
use crate::hardware::{catalog_first, Catalog};
use crate::model::{preset, presets_first};
use crate::present::report::{evaluate_titles_only, GpuReport, Report, Verdict};
use crate::present::series::MemoryBar;
use crate::scenario::{coalesce, BudgetRule, GpuChoice, ModelSource, Notice, Scenario, ViewMode};
use serde::Serialize;

/// The context-length slider's range, as powers of two (128 to 1,048,576 tokens).
pub const CONTEXT_SLIDER_LOG2: (u32, u32) = (7, 20);
/// The concurrency slider's range, as powers of two (1 to 1,024 requests).
pub const CONCURRENCY_SLIDER_LOG2: (u32, u32) = (0, 10);

/// A power-of-two slider's position for `v`: the exponent of the power of two nearest below
/// it, clamped to `exp` (0 reads as 1).
pub fn log2_pos(v: u64, exp: (u32, u32)) -> u32 {
    (63 - v.max(1).leading_zeros()).clamp(exp.0, exp.1)
}

/// "0.5 MiB (524,288 B)": the textbook's unit for small per-token sizes, with exact bytes,
/// in the language's number symbols.
pub fn fmt_mib_exact(nf: NumberSymbols, b: Bytes) -> String {
    format!("{} MiB ({} B)", nf.sig(b.mib()), nf.group(b.0))
}

/// The cards' "Show the math" panels, in card order: the derivation's title key and the
/// panel's test id.
pub const CARD_MATH: [(&str, &str); 5] = [
    ("params_total", "math-params"),
    ("weights_bytes", "math-weights"),
    ("kv_per_token", "math-kv-token"),
    ("kv_per_request", "math-kv-request"),
    ("kv_total", "math-kv-total"),
];

/// The summary cards' text.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct CardsText {
    pub params_total: String,
    /// The total in 억, Korean only ("" otherwise).
    pub params_eok: String,
    /// The active parameters of a mixture of experts ("" when all are active).
    pub params_active: String,
    /// The language model, vision tower and MTP lines (empty when the total is all language
    /// model).
    pub params_parts: Vec<String>,
    /// Whether the checkpoint has MTP modules (the "load them" switch is shown).
    pub has_mtp: bool,
    pub weights: String,
    pub weight_dtype: String,
    pub kv_token: String,
    pub kv_dtype: String,
    pub kv_request: String,
    pub kv_request_sub: String,
    pub kv_total: String,
    pub kv_total_sub: String,
    /// Whether the budget rule is vLLM's (the requests card's line and numbers follow it).
    pub vllm: bool,
    pub gpus: Vec<GpuText>,
    /// The math of the parameters, weights, KV per token, per request and in all.
    #[serde(skip)]
    pub math: [Option<Derivation>; 5],
}

/// One GPU's maximum concurrency and vLLM log.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct GpuText {
    pub key: String,
    pub name: String,
    pub requests: String,
    /// The line under the requests (theoretical count, or vLLM's concurrency).
    pub sub: String,
    #[serde(skip)]
    pub math: Option<Derivation>,
    pub log: String,
}

impl GpuText {
    fn new(lang: Lang, vllm: bool, g: &GpuReport) -> GpuText {
        let nf = lang.number_symbols();
        let sub = if vllm {
            format!("vLLM {:.2}×", g.vllm_concurrency)
        } else {
            format!(
                "({} {})",
                nf.group(g.requests_theoretical),
                tr(lang, "card_theoretical")
            )
        };
        let want = if vllm {
            "vllm_max_concurrency"
        } else {
            "mem_requests_practical"
        };
        let math = g
            .derivations
            .iter()
            .find(|d| d.title_key == want)
            .or_else(|| {
                g.derivations
                    .iter()
                    .find(|d| d.title_key == "mem_requests_practical")
            })
            .cloned();
        GpuText {
            key: g.key.clone(),
            name: g.accelerator.name.clone(),
            requests: nf.group(g.requests),
            sub,
            math,
            log: g.vllm_log.join("\n"),
        }
    }
}

impl CardsText {
    /// The cards of `r` in `lang`; `vllm`: the scenario's budget rule is vLLM's.
    pub fn new(lang: Lang, vllm: bool, r: &Report) -> Self {
        Self::with_phrases(lang, vllm, r, Phrase::text)
    }

    /// [`CardsText::new`], its phrases written by `text`.
    fn with_phrases(
        lang: Lang,
        vllm: bool,
        r: &Report,
        text: impl Fn(&Phrase, Lang) -> String,
    ) -> Self {
        let t = |k: &str| tr(lang, k);
        let nf = lang.number_symbols();
        let p = &r.model.params;
        CardsText {
            params_total: nf.group(p.total),
            // Korean readers count parameters in 억 (10^8), as the course does ("70억 개").
            params_eok: (lang == Lang::Ko)
                .then(|| fmt_eok(p.total, nf))
                .flatten()
                .unwrap_or_default(),
            params_active: if p.active != p.total {
                nf.group(p.active)
            } else {
                String::new()
            },
            params_parts: r
                .model
                .param_parts()
                .iter()
                .map(|p| text(p, lang))
                .collect(),
            has_mtp: p.mtp > 0,
            weights: nf.bytes_both(r.weights, false),
            weight_dtype: r.weight_dtype.id().to_string(),
            kv_token: fmt_mib_exact(nf, r.kv_per_token),
            kv_dtype: r.kv_dtype.id().to_string(),
            kv_request: nf.bytes_both(r.kv_per_request, false),
            kv_request_sub: format!("{} {}", nf.group(r.context_len), t("unit_tokens")),
            kv_total: nf.bytes_both(r.kv_total, false),
            kv_total_sub: format!("× {} {}", nf.group(r.concurrency), t("unit_requests")),
            vllm,
            gpus: r.gpus.iter().map(|g| GpuText::new(lang, vllm, g)).collect(),
            math: CARD_MATH.map(|(k, _)| r.derivation(k).cloned()),
        }
    }
}

/// The text of a phrase a first screen shows (a key and plain values: the parameters' lines, a
/// model's warnings), as [`Phrase::text`] writes it; any other phrase is a miss
/// (`lookups::missed`), so the first screen declines. The first-answer module so links none of
/// the error sentences [`Phrase::text`] also writes.
fn plain_text(p: &Phrase, lang: Lang) -> String {
    if let Phrase::Tr(key, vals) = p {
        let plain: Option<Vec<(&str, &str)>> = (vals.iter())
            .map(|(n, v)| match v {
                Phrase::Verbatim(t) => Some((*n, t.as_str())),
                _ => None,
            })
            .collect();
        if let Some(pairs) = plain {
            return fill(tr(lang, key), &pairs);
        }
    }
    crate::base::lookups::missed();
    String::new()
}

/// The parts of a memory bar: (translation key, CSS class).
pub const FIT_PARTS: [(&str, &str); 5] = [
    ("fit_weights", "seg-weights"),
    ("fit_kv", "seg-kv"),
    ("fit_activations", "seg-act"),
    ("fit_overhead", "seg-overhead"),
    ("fit_free", "seg-free"),
];

/// The parts of a memory bar: (translation key, CSS class, bytes).
fn parts(b: &MemoryBar) -> [(&'static str, &'static str, Bytes); 5] {
    let bytes = [b.weights, b.kv, b.activations, b.overhead, b.free];
    std::array::from_fn(|i| (FIT_PARTS[i].0, FIT_PARTS[i].1, bytes[i]))
}

/// One suggestion of what would fit, as a sentence.
fn suggestion_text(lang: Lang, s: &Suggestion) -> String {
    let nf = lang.number_symbols();
    match s {
        Suggestion::TensorParallel { gpus, requests } => fill(
            tr(lang, "suggest_tp"),
            &[
                ("gpus", &gpus.to_string()),
                ("requests", &nf.group(*requests)),
            ],
        ),
        Suggestion::LowerPrecision {
            dtype,
            weights,
            requests,
        } => fill(
            tr(lang, "suggest_precision"),
            &[
                ("dtype", dtype.id()),
                ("weights", &nf.gib(*weights)),
                ("requests", &nf.group(*requests)),
            ],
        ),
        Suggestion::ShorterContext { max_tokens } => fill(
            tr(lang, "suggest_context"),
            &[("tokens", &nf.group(*max_tokens))],
        ),
    }
}

/// The text of one GPU's row of the fit table.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct FitRowText {
    pub name: String,
    pub verdict_class: &'static str,
    pub verdict: String,
    pub suggestions: Vec<String>,
    /// Per part of the memory bar: width (CSS %, empty when the part is zero), label.
    pub segs: [(String, String); 5],
    /// Width of the part over capacity, empty when nothing is over.
    pub over: String,
    pub bar_label: String,
    pub used: String,
    pub legend: [String; 5],
    pub requests: String,
    pub price: String,
    pub per_request: String,
    pub cheapest: bool,
    #[serde(skip)]
    pub cost_math: Option<Derivation>,
}

impl FitRowText {
    /// The row of the report's GPU `i` in `lang` (marked cheapest per request only among
    /// several GPUs).
    pub fn of(lang: Lang, r: &Report, i: usize) -> Self {
        FitRowText::new(lang, &r.gpus[i], r.cheapest == Some(i) && r.gpus.len() > 1)
    }

    fn new(lang: Lang, g: &GpuReport, cheapest: bool) -> Self {
        let nf = lang.number_symbols();
        let b = &g.bar;
        let total = b.used().max(b.capacity).0.max(1) as f64;
        let pct = |v: Bytes| format!("{:.2}%", v.0 as f64 / total * 100.0);
        let label = |k: &str, v: Bytes| format!("{}: {}", tr(lang, k), nf.gib(v));
        let p = parts(b);
        let summary = p
            .iter()
            .filter(|(_, _, v)| v.0 > 0)
            .map(|(k, _, v)| label(k, *v))
            .collect::<Vec<_>>()
            .join(", ");
        FitRowText {
            name: g.accelerator.name.clone(),
            verdict_class: match g.verdict {
                Verdict::Fits => "verdict ok",
                Verdict::Partial => "verdict warn",
                Verdict::DoesNotFit => "verdict bad",
            },
            verdict: tr(lang, g.verdict.key()).to_string(),
            suggestions: g
                .suggestions
                .iter()
                .map(|s| suggestion_text(lang, s))
                .collect(),
            segs: p.map(|(k, _, v)| {
                if v.0 > 0 {
                    (pct(v), label(k, v))
                } else {
                    Default::default()
                }
            }),
            over: if b.over.0 > 0 {
                pct(b.over)
            } else {
                String::new()
            },
            bar_label: format!("{} {summary}", tr(lang, "ui_section_fit")),
            used: format!("{} / {}", nf.gib(b.used()), nf.gib(b.capacity)),
            legend: p.map(|(k, _, v)| format!("{} {}", tr(lang, k), nf.gib(v))),
            requests: nf.group(g.requests),
            price: g
                .usd_per_hour
                .map(|p| format!("${}", nf.sig(p)))
                .unwrap_or_else(|| tr(lang, "gpu_price_unknown").to_string()),
            per_request: g
                .usd_per_request_hour
                .map(|c| format!("${}", nf.sig(c)))
                .unwrap_or_else(|| "—".to_string()),
            cheapest,
            cost_math: g
                .derivations
                .iter()
                .find(|d| d.title_key == "cost_per_request")
                .cloned(),
        }
    }

    /// The rows of a report, in its GPUs' order.
    pub fn rows(lang: Lang, r: &Report) -> Vec<FitRowText> {
        (0..r.gpus.len())
            .map(|i| FitRowText::of(lang, r, i))
            .collect()
    }
}

/// Sentences comparing each GPU with the first one: price ratio, request ratio, cost ratio.
pub fn fit_comparisons(lang: Lang, r: &Report) -> Vec<String> {
    let Some(first) = r.gpus.first() else {
        return Vec::new();
    };
    let (Some(p0), Some(c0)) = (first.usd_per_hour, first.usd_per_request_hour) else {
        return Vec::new();
    };
    r.gpus
        .iter()
        .skip(1)
        .filter_map(|g| {
            let (p, c) = (g.usd_per_hour?, g.usd_per_request_hour?);
            let req = g.requests as f64 / first.requests.max(1) as f64;
            Some(fill(
                tr(lang, "fit_compare"),
                &[
                    ("a", &g.accelerator.name),
                    ("b", &first.accelerator.name),
                    ("price", &lang.number_symbols().sig(p / p0)),
                    ("req", &lang.number_symbols().sig(req)),
                    ("cost", &lang.number_symbols().sig(c / c0)),
                ],
            ))
        })
        .collect()
}

/// The scenario of a page's query (with or without its leading `?`), sanitised against the
/// built-in catalog and presets, with one notice per parameter that could not be used: what
/// the live page and the first-answer module both start from.
pub fn read_query(query: &str) -> (Scenario, Vec<Notice>) {
    read_query_in(query, Catalog::builtin(), preset)
}

/// [`read_query`] against `catalog` and the presets `preset` finds by id.
fn read_query_in<P>(
    query: &str,
    catalog: &Catalog,
    preset: impl Fn(&str) -> Option<P>,
) -> (Scenario, Vec<Notice>) {
    let (mut s, mut notices) = Scenario::from_query(query);
    notices.extend(s.sanitize(catalog, |id| preset(id).is_some()));
    (s, coalesce(notices))
}

/// What the prerendered copy of the default first screen needs to show another scenario's:
/// the inputs' values and every text of the cards and the fit table, as the live page shows
/// them (the same builders). Only for scenarios whose first screen has the copy's shape: see
/// [`FirstScreen::of`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FirstScreen {
    /// "en" or "ko".
    pub lang: &'static str,
    /// The preset's id (the model select's value) and its display name.
    pub preset: String,
    pub name: String,
    pub arch: String,
    pub layers: String,
    /// The number of entries in the assumption ledger.
    pub ledger: usize,
    /// The model's warnings (the live page lists them under its facts), and the list's label.
    pub warnings: Vec<String>,
    pub warnings_label: &'static str,
    pub tp: String,
    pub ctx: String,
    pub ctx_pretty: String,
    pub ctx_slider: String,
    pub n: String,
    pub n_pretty: String,
    pub n_slider: String,
    /// The precision selects' values ("" for the checkpoint's / the model's default).
    pub wd: String,
    pub kvd: String,
    pub cards: CardsText,
    pub rows: Vec<FitRowText>,
    pub compare: Vec<String>,
    /// The labels of the parts the copy of the default scenario does not have: the active
    /// parameters' line, the MTP switch, the suggestions' title.
    pub active_label: &'static str,
    pub mtp_label: &'static str,
    pub suggest_title: &'static str,
    /// The test ids of the "Show the math" panels with no derivation (the page hides them).
    pub math_hidden: Vec<String>,
}

impl FirstScreen {
    /// The first screen of the page at `query` for a browser whose language reads as
    /// `browser`, when the copy of the default one can show it: a preset model, catalog GPUs,
    /// the textbook rule, the default interconnect, the full page, and nothing the copy has no
    /// place for (a notice, a GPU's error). `None` otherwise: the page then
    /// waits for the live app.
    pub fn of(query: &str, browser: Lang) -> Option<FirstScreen> {
        Self::with_report(query, browser, |v| v == ViewMode::Full).map(|(f, _, _)| f)
    }

    /// [`FirstScreen::of`] for a page whose view `view_ok` accepts, with the scenario and the
    /// report it was made from (an embedded widget shows more of them: `present::first_embed`).
    pub(crate) fn with_report(
        query: &str,
        browser: Lang,
        view_ok: impl Fn(ViewMode) -> bool,
    ) -> Option<(FirstScreen, Scenario, Report)> {
        // The catalog and the preset's model as the live page has them, stored
        // (`hardware::catalog_first`, `model::presets_first`): the first-answer module links
        // neither the catalog's parser nor a config reader.
        let catalog = catalog_first::builtin();
        let (s, notices) = read_query_in(query, catalog, presets_first::get);
        if !notices.is_empty() || !view_ok(s.view) || !Self::shaped(&s) {
            return None;
        }
        let ModelSource::Preset(id) = &s.model else {
            return None;
        };
        let p = presets_first::get(id)?;
        // The math is not shown before the live app: the derivations carry their titles only.
        let r = evaluate_titles_only(&s, p.model()?, catalog).ok()?;
        let lang = s.lang.unwrap_or(browser);
        let cards = CardsText::with_phrases(lang, false, &r, plain_text);
        let rows = FitRowText::rows(lang, &r);
        // The eok line exists in the Korean copy only, and there it always has a figure.
        let eok_fits = (lang == Lang::Ko) != cards.params_eok.is_empty();
        if !r.gpu_errors.is_empty() || !eok_fits {
            return None;
        }
        let nf = lang.number_symbols();
        let math_hidden = (CARD_MATH.iter().zip(&cards.math))
            .filter(|(_, m)| m.is_none())
            .map(|((_, id), _)| (*id).to_string())
            .chain(cards.gpus.iter().zip(&rows).flat_map(|(g, w)| {
                [
                    g.math.is_none().then(|| format!("math-requests-{}", g.key)),
                    w.cost_math
                        .is_none()
                        .then(|| format!("math-cost-{}", g.key)),
                ]
                .into_iter()
                .flatten()
            }))
            .collect();
        let first = FirstScreen {
            lang: lang.code(),
            preset: id.clone(),
            name: p.label.clone(),
            arch: r.model.model_type.clone(),
            layers: r.model.stated_layers().to_string(),
            ledger: r.model.ledger.len(),
            warnings: r
                .model
                .warnings
                .iter()
                .map(|w| plain_text(w, lang))
                .collect(),
            warnings_label: tr(lang, "model_warnings"),
            tp: s.tp.to_string(),
            ctx: s.context_len.to_string(),
            ctx_pretty: nf.group(s.context_len),
            ctx_slider: log2_pos(s.context_len, CONTEXT_SLIDER_LOG2).to_string(),
            n: s.concurrency.to_string(),
            n_pretty: nf.group(s.concurrency),
            n_slider: log2_pos(s.concurrency, CONCURRENCY_SLIDER_LOG2).to_string(),
            wd: s
                .weight_dtype
                .map(|d| d.id().to_string())
                .unwrap_or_default(),
            kvd: s.kv_dtype.map(|d| d.id().to_string()).unwrap_or_default(),
            compare: fit_comparisons(lang, &r),
            cards,
            rows,
            active_label: tr(lang, "card_params_active"),
            mtp_label: tr(lang, "card_include_mtp"),
            suggest_title: tr(lang, "suggest_title"),
            math_hidden,
        };
        Some((first, s, r))
    }

    /// Whether the scenario's inputs have the copy's shape (the fields it fills).
    fn shaped(s: &Scenario) -> bool {
        let d = Scenario::default();
        matches!(s.budget, BudgetRule::Textbook)
            && s.interconnect == d.interconnect
            && !s.include_mtp
            && !s.gpus.is_empty()
            && s.gpus.iter().all(|g| matches!(g, GpuChoice::Catalog(_)))
    }

    /// [`FirstScreen::of`] as JSON text, "" when the copy cannot show the scenario.
    pub fn json(query: &str, browser: Lang) -> String {
        json_unless_missed(|| FirstScreen::of(query, browser)).0
    }
}

/// What `make` makes, and it as JSON text; nothing and "" when it made nothing or looked up a
/// text or a configuration class this module does not carry (`present::link_first`): the shell
/// then answers the link, never a marker in the copy nor a config read without its class's
/// defaults.
pub(crate) fn json_unless_missed<T: Serialize>(
    make: impl FnOnce() -> Option<T>,
) -> (String, Option<T>) {
    let _ = crate::base::lookups::take_missed();
    let made = make();
    if crate::base::lookups::take_missed() {
        return (String::new(), None);
    }
    match made.as_ref().and_then(|f| serde_json::to_string(f).ok()) {
        Some(json) => (json, made),
        None => (String::new(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::present::report::{own_math_as_titles, report_for_test};
    use crate::scenario::Scenario;

    /// The chapter's default scenario, as the page shows it (WORKED_EXAMPLES §2–3): the cards'
    /// figures are computed from the report's bytes, and the rows say which GPU falls short.
    #[test]
    fn default_scenario_text() {
        let r = report_for_test(&Scenario::default());
        let c = CardsText::new(Lang::En, false, &r);
        assert_eq!(
            c.params_total,
            Lang::En.number_symbols().group(r.model.params.total)
        );
        assert_eq!(c.params_eok, "");
        let kv = r.kv_per_token.0;
        assert_eq!(c.kv_token, format!("0.5 MiB ({} B)", group_en(kv)));
        assert_eq!(kv, 2 * 32 * 32 * 128 * 2);
        assert_eq!(c.gpus.len(), r.gpus.len());
        for (g, rep) in c.gpus.iter().zip(&r.gpus) {
            assert_eq!(g.requests, group_en(rep.requests));
            assert!(
                g.sub.contains(&group_en(rep.requests_theoretical)),
                "{}",
                g.sub
            );
        }
        let ko = CardsText::new(Lang::Ko, false, &r);
        assert!(ko.params_eok.ends_with('억'), "{}", ko.params_eok);
        let rows = FitRowText::rows(Lang::En, &r);
        let verdicts: Vec<&str> = rows.iter().map(|w| w.verdict_class).collect();
        let want: Vec<&str> = r
            .gpus
            .iter()
            .map(|g| match g.verdict {
                Verdict::Fits => "verdict ok",
                Verdict::Partial => "verdict warn",
                Verdict::DoesNotFit => "verdict bad",
            })
            .collect();
        assert_eq!(verdicts, want);
        // One cheapest row, and it is the report's.
        let marked: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].cheapest).collect();
        assert_eq!(marked, r.cheapest.into_iter().collect::<Vec<_>>());
        // A bar's shown parts are those with bytes, each with its width.
        for (row, g) in rows.iter().zip(&r.gpus) {
            let b = &g.bar;
            let bytes = [b.weights, b.kv, b.activations, b.overhead, b.free];
            for (seg, v) in row.segs.iter().zip(bytes) {
                assert_eq!(seg.0.is_empty(), v.0 == 0, "{seg:?} for {v:?}");
            }
        }
    }

    fn group_en(n: u64) -> String {
        Lang::En.number_symbols().group(n)
    }

    /// Every preset at a link's settings: either a first screen whose texts are the live
    /// builders' for that scenario, or none for a reason the copy has no place for.
    #[test]
    fn first_screen_of_links() {
        let f = FirstScreen::of("?ctx=8192&n=8&gpu=h100-sxm&gpu=l40s&gpu=a10g", Lang::En)
            .expect("served");
        assert_eq!(
            (f.ctx.as_str(), f.ctx_pretty.as_str(), f.ctx_slider.as_str()),
            ("8192", "8,192", "13")
        );
        assert_eq!((f.n.as_str(), f.n_slider.as_str()), ("8", "3"));
        let keys: Vec<&str> = f.cards.gpus.iter().map(|g| g.key.as_str()).collect();
        assert_eq!(keys, ["h100-sxm", "l40s", "a10g"]);
        assert_eq!(f.rows.len(), 3);
        let (mut s, _) = Scenario::from_query("?ctx=8192&n=8&gpu=h100-sxm&gpu=l40s&gpu=a10g");
        let _ = s.sanitize(Catalog::builtin(), |id| preset(id).is_some());
        let r = own_math_as_titles(report_for_test(&s));
        assert_eq!(f.cards, CardsText::new(Lang::En, false, &r));
        // The link's language wins over the browser's.
        assert_eq!(
            FirstScreen::of("?lang=ko&n=4", Lang::En).map(|f| f.lang),
            Some("ko")
        );
        // What the copy cannot show.
        for q in [
            "?embed=memory",
            "?rule=vllm",
            "?ctx=abc",
            "?zzz=1",
            "?params=7e9",
            "?mtp=1",
        ] {
            assert_eq!(FirstScreen::of(q, Lang::En), None, "{q}");
        }
        assert_eq!(FirstScreen::json("?embed=kv", Lang::En), "");
        assert!(FirstScreen::json("?n=2", Lang::En).starts_with('{'));
    }

    /// On every GPU of the catalog, the stored catalog's first screen is the live builders'
    /// on the parsed one (what it leaves out is nothing the screen shows or computes with):
    /// a dense model at TP 2, MXFP4 experts, FP8 MLA at TP 8.
    #[test]
    fn every_gpu_shows_as_the_live_catalog_shows_it() {
        let models = [
            "Qwen__Qwen3-8B&tp=2",
            "gpt-oss-20b",
            "deepseek-v3&tp=8&ctx=32768",
        ];
        let gpus = &Catalog::builtin().accelerators;
        let mut served = 0;
        for (a, m) in gpus.iter().flat_map(|a| models.map(|m| (a, m))) {
            let q = format!("?model={m}&gpu={}&gpu=h100-sxm", a.id);
            let (s, _) = Scenario::from_query(&q);
            let r = own_math_as_titles(report_for_test(&s));
            for lang in [Lang::En, Lang::Ko] {
                let Some(f) = FirstScreen::of(&q, lang) else {
                    assert!(!r.gpu_errors.is_empty(), "{q}");
                    continue;
                };
                assert_eq!(f.cards, CardsText::new(lang, false, &r), "{q}");
                assert_eq!(f.rows, FitRowText::rows(lang, &r), "{q}");
                assert_eq!(f.compare, fit_comparisons(lang, &r), "{q}");
                served += 1;
            }
        }
        assert_eq!(served, gpus.len() * models.len() * 2);
    }

    /// A key with plain values is written as `Phrase::text` writes it; anything else is a miss.
    #[test]
    fn plain_phrases_or_a_miss() {
        let _ = crate::base::lookups::take_missed();
        let line = Phrase::tr("prm_language_model").val("n", "1,000");
        for lang in [Lang::En, Lang::Ko] {
            assert_eq!(plain_text(&line, lang), line.text(lang));
        }
        assert!(!crate::base::lookups::take_missed());
        let nested = Phrase::tr("prm_vision").sub("n", Phrase::tr("unit_tokens"));
        assert_eq!(plain_text(&nested, Lang::En), "");
        assert!(crate::base::lookups::take_missed());
    }

    /// Every preset is served at the default settings, its model's warnings listed (the copy
    /// lists them where the live page does).
    #[test]
    fn every_preset_is_served_with_its_warnings() {
        let mut warned = 0;
        for p in crate::model::presets::all() {
            let q = format!("?model={}", p.id);
            let (s, _) = Scenario::from_query(&q);
            let warnings = report_for_test(&s).model.warnings;
            for lang in [Lang::En, Lang::Ko] {
                let f = FirstScreen::of(&q, lang).unwrap_or_else(|| panic!("{} ({lang:?})", p.id));
                let want: Vec<String> = warnings.iter().map(|w| w.text(lang)).collect();
                assert_eq!(f.warnings, want, "{}", p.id);
            }
            warned += usize::from(!warnings.is_empty());
        }
        // DeepSeek-V3 and R1 (their MTP module) and falcon-7b (a matrix stored twice).
        assert!(warned >= 3, "{warned}");
    }
}
