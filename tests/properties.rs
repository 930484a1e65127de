//! Property tests over the core's numeric inputs (issue 7), with proptest.
//!
//! * Config parsing never panics for any values of the six dimensions (up to 2^40 and far
//!   beyond, zero included); an accepted config has consistent totals that equal the hand
//!   formula exactly, and a config whose count does not fit in 64 bits is an `Overflow`.
//! * KV-cache memory grows with context length and with batch, and equals its formula.
//! * `Scenario::from_query` never panics on arbitrary text, and
//!   `from_query(to_query(s)) == s` with no notice for generated scenarios.
//!
//! Kept fast: at most 256 cases per property (the whole file runs in a few seconds).

mod common;

use common::consistent;
use llm_serving_calculator::core::base::dtype::Dtype;
use llm_serving_calculator::core::base::error::CalcError;
use llm_serving_calculator::core::base::i18n::Lang;
use llm_serving_calculator::core::calc::memory::KvProfile;
use llm_serving_calculator::core::hardware::catalog::{
    CustomAccelerator, CustomFigure, InterconnectPreset, Link, NAME_MAX_CHARS,
};
use llm_serving_calculator::core::hardware::Architecture;
use llm_serving_calculator::core::model::config::parse_model_text;
use llm_serving_calculator::core::scenario::{
    limits, BudgetRule, EmbedWidget, GpuChoice, ModelSource, PerfInputs, Scenario, ViewMode,
    MAX_GPUS,
};
use proptest::prelude::*;
use proptest::test_runner::Config as PropConfig;
use serde_json::json;

/// A dimension: mostly small and valid, sometimes up to 2^40, beyond it, zero or `u64::MAX`.
fn dim() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => 1u64..=8192,
        2 => 1u64..=(1 << 40),
        1 => (1u64 << 40)..=u64::MAX,
        1 => Just(0u64),
        1 => Just(u64::MAX),
    ]
}

/// A layer count: mostly small (each layer is materialized), sometimes up to the 65,536
/// limit or beyond it.
fn layers() -> impl Strategy<Value = u64> {
    prop_oneof![
        8 => 1u64..=64,
        1 => 1u64..=65_536,
        1 => 65_537u64..=u64::MAX,
        1 => Just(0u64),
    ]
}

/// The hand formula of a bias-free Llama decoder with GQA, untied:
/// `L·(h·H·d + 2·h·K·d + H·d·h + 3·h·I + 2·h) + h + 2·V·h`, in u128 (cannot overflow for
/// inputs below 2^64 except in absurd cases, which are then compared saturated).
fn llama_formula(
    h: u64,
    l: u64,
    heads: u64,
    kv: u64,
    d: u64,
    inter: u64,
    vocab: u64,
) -> Option<u128> {
    let (h, l, heads, kv, d, inter, vocab) = (
        u128::from(h),
        u128::from(l),
        u128::from(heads),
        u128::from(kv),
        u128::from(d),
        u128::from(inter),
        u128::from(vocab),
    );
    let attn = h.checked_mul(heads)?.checked_mul(d)?.checked_mul(2)?;
    let kvp = h.checked_mul(kv)?.checked_mul(d)?.checked_mul(2)?;
    let mlp = h.checked_mul(inter)?.checked_mul(3)?;
    let per = attn
        .checked_add(kvp)?
        .checked_add(mlp)?
        .checked_add(h.checked_mul(2)?)?;
    let emb = vocab.checked_mul(h)?.checked_mul(2)?;
    l.checked_mul(per)?.checked_add(h)?.checked_add(emb)
}

fn config_text(
    h: u64,
    l: u64,
    heads: u64,
    kv: u64,
    inter: u64,
    vocab: u64,
    head_dim: Option<u64>,
) -> String {
    let mut v = json!({
        "model_type": "llama",
        "hidden_size": h,
        "num_hidden_layers": l,
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "intermediate_size": inter,
        "vocab_size": vocab,
        "tie_word_embeddings": false,
        "torch_dtype": "bfloat16"
    });
    if let (Some(d), Some(o)) = (head_dim, v.as_object_mut()) {
        o.insert("head_dim".into(), json!(d));
    }
    v.to_string()
}

const MAX_DIM: u64 = 1 << 40;

proptest! {
    #![proptest_config(PropConfig { cases: 256, ..PropConfig::default() })]

    /// Any six numbers: never a panic; Ok means in range, consistent and exactly the
    /// formula; a valid config whose count exceeds 2^64 is an Overflow; every rejection is
    /// a sentence in both languages.
    #[test]
    fn config_numbers_never_panic_and_ok_is_exact(
        h in dim(), l in layers(), heads in dim(), kv in dim(), inter in dim(), vocab in dim(),
        head_dim in proptest::option::weighted(0.3, dim()),
    ) {
        let text = config_text(h, l, heads, kv, inter, vocab, head_dim);
        let in_range = |x: u64| (1..=MAX_DIM).contains(&x);
        let d = head_dim.unwrap_or(h.checked_div(heads).unwrap_or(0));
        let valid = [h, heads, kv, inter, vocab].iter().all(|x| in_range(*x))
            && (1..=65_536).contains(&l)
            && head_dim.is_none_or(in_range)
            && (head_dim.is_some() || h % heads == 0)
            && kv <= heads
            && heads % kv == 0;
        let want = if valid { llama_formula(h, l, heads, kv, d, inter, vocab) } else { None };
        match parse_model_text(&text) {
            Ok(m) => {
                prop_assert!(valid, "accepted an invalid config: {text}");
                let c = consistent(&m.params);
                prop_assert!(c.is_ok(), "{:?}: {:?}", c, m.params);
                prop_assert_eq!(Some(u128::from(m.params.total)), want, "{}", text);
                prop_assert!(KvProfile::from_model(&m, Dtype::Bf16, 1, Architecture::Unknown).is_ok());
            }
            Err(e) => {
                // Every partial product is at most the total, so a valid config whose total
                // fits in 64 bits must be accepted; one whose total does not is an Overflow.
                let fits = want.is_some_and(|w| w <= u128::from(u64::MAX));
                prop_assert!(!(valid && fits), "refused a valid config: {e}: {text}");
                if valid {
                    prop_assert!(matches!(e, CalcError::Overflow { .. }), "expected Overflow, got {e}");
                }
                for lang in Lang::ALL {
                    let msg = e.message(*lang);
                    prop_assert!(!msg.trim().is_empty() && !msg.contains('\n'), "{msg:?}");
                }
            }
        }
    }

    /// Configs that are valid by construction (heads = KV heads × group, hidden = heads ×
    /// head_dim), with sizes from tiny to beyond 2^40: the exact formula when the total fits
    /// in 64 bits, an Overflow naming a quantity otherwise, an out-of-range error naming the
    /// key when a dimension exceeds 2^40.
    #[test]
    fn valid_shapes_are_exact_or_overflow(
        kv_pow in 0u32..=12, group_pow in 0u32..=8, d_pow in 0u32..=24, l in layers(),
        inter in dim(), vocab in dim(),
    ) {
        let kv = 1u64 << kv_pow;
        let heads = kv << group_pow;
        let h = heads << d_pow;
        let d = 1u64 << d_pow;
        let text = config_text(h, l, heads, kv, inter, vocab, None);
        let in_range = |x: u64| (1..=MAX_DIM).contains(&x);
        let valid = [h, heads, kv, inter, vocab].iter().all(|x| in_range(*x)) && (1..=65_536).contains(&l);
        let want = llama_formula(h, l, heads, kv, d, inter, vocab);
        let fits = want.is_some_and(|w| w <= u128::from(u64::MAX));
        match parse_model_text(&text) {
            Ok(m) => {
                prop_assert!(valid && fits, "accepted: {text}");
                let c = consistent(&m.params);
                prop_assert!(c.is_ok(), "{:?}", c);
                prop_assert_eq!(Some(u128::from(m.params.total)), want);
            }
            Err(CalcError::Overflow { what }) => {
                prop_assert!(valid && !fits, "Overflow ({what}) for {text}");
                // A translated name of the quantity, in both languages.
                for lang in [Lang::En, Lang::Ko] {
                    let t = what.text(lang);
                    prop_assert!(!t.is_empty() && !t.contains("missing translation"), "{t}: {what:?}");
                }
            }
            Err(e) => {
                prop_assert!(!valid, "refused a valid config: {e}: {text}");
                let msg = e.to_string();
                let named = ["hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "intermediate_size", "vocab_size"]
                    .iter()
                    .any(|k| msg.contains(k));
                prop_assert!(named, "the message names no key: {msg}");
            }
        }
    }

    /// A realistic model: KV bytes per request are `2·L·K·d·b·len` exactly (bf16: b = 2),
    /// grow with the context, and the batch multiplies them.
    #[test]
    fn kv_memory_grows_with_context_and_batch(
        l in 1u64..=128, kv_pow in 0u32..=4, group_pow in 0u32..=3, d_pow in 6u32..=8,
        len_a in 0u64..=2_000_000, len_b in 0u64..=2_000_000,
        batch_a in 1u64..=100_000, batch_b in 1u64..=100_000,
    ) {
        let (kv, d) = (1u64 << kv_pow, 1u64 << d_pow);
        let heads = kv << group_pow;
        let h = heads * d;
        let text = config_text(h, l, heads, kv, 4 * h, 32_000, None);
        let m = parse_model_text(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let p = KvProfile::from_model(&m, Dtype::Bf16, 1, Architecture::Unknown).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let (lo, hi) = (len_a.min(len_b), len_a.max(len_b));
        prop_assert!(p.per_request(lo) <= p.per_request(hi));
        let per_token = 2 * l * kv * d * 2;
        prop_assert_eq!(p.per_request(hi).0, per_token * hi);
        let (b_lo, b_hi) = (batch_a.min(batch_b), batch_a.max(batch_b));
        prop_assert!(p.per_batch(b_lo, hi) <= p.per_batch(b_hi, hi));
        prop_assert_eq!(p.per_batch(b_hi, hi).0, u64::try_from(u128::from(per_token) * u128::from(hi) * u128::from(b_hi)).unwrap_or(u64::MAX));
    }

    /// Every preset: KV memory never shrinks as context or batch grow, at any KV precision
    /// and a TP degree the preset accepts.
    #[test]
    fn preset_kv_is_monotonic(
        idx in 0usize..64, dt in 0usize..8, len_a in 0u64..=10_000_000, len_b in 0u64..=10_000_000,
        batch in 1u64..=1_000_000,
    ) {
        let presets: Vec<_> = llm_serving_calculator::core::model::presets::all().iter().collect();
        prop_assume!(!presets.is_empty());
        let p = &presets[idx % presets.len()];
        let dtype = Dtype::ALL[dt % Dtype::ALL.len()];
        let m = p.parse().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let kv = KvProfile::from_model(&m, dtype, 1, Architecture::Unknown).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let (lo, hi) = (len_a.min(len_b), len_a.max(len_b));
        prop_assert!(kv.per_request(lo) <= kv.per_request(hi));
        prop_assert!(kv.per_batch(batch, hi) >= kv.per_request(hi));
        prop_assert!(kv.per_batch(batch, lo) <= kv.per_batch(batch, hi));
    }

    /// Arbitrary text, and text made of the query's own pieces: never a panic, and the
    /// scenario stays within its limits.
    #[test]
    fn from_query_never_panics(q in prop_oneof![
        ".{0,200}",
        proptest::collection::vec(
            (prop_oneof![
                Just("v"), Just("model"), Just("cfg"), Just("params"), Just("dtype"), Just("gpu"),
                Just("tp"), Just("ic"), Just("ctx"), Just("n"), Just("wd"), Just("kvd"),
                Just("rule"), Just("gmu"), Just("bs"), Just("in"), Just("out"), Just("batch"),
                Just("lang"), Just("embed"), Just("%"), Just("")
            ], "[-0-9a-zA-Z.%:;=+_~]{0,24}"),
            0..12,
        ).prop_map(|kv| kv.into_iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&")),
    ]) {
        let (s, notices) = Scenario::from_query(&q);
        prop_assert!(!s.gpus.is_empty() && s.gpus.len() <= MAX_GPUS);
        prop_assert!((limits::TP.0..=limits::TP.1).contains(&u64::from(s.tp)));
        prop_assert!((limits::CONTEXT_LEN.0..=limits::CONTEXT_LEN.1).contains(&s.context_len));
        prop_assert!((limits::CONCURRENCY.0..=limits::CONCURRENCY.1).contains(&s.concurrency));
        for n in &notices {
            prop_assert!(!n.message(Lang::En).is_empty());
        }
    }

    /// What the app writes into a link, it reads back unchanged and without a notice.
    #[test]
    fn to_query_then_from_query_is_the_identity(s in scenario()) {
        let q = s.to_query();
        let (back, notices) = Scenario::from_query(&q);
        prop_assert!(notices.is_empty(), "{q}: {notices:?}");
        prop_assert_eq!(back, s, "{}", q);
    }

    /// A custom accelerator's figure within its range (`CustomFigure::range`, both ends
    /// included) is accepted; outside it (just below or above, far off, non-finite) it is
    /// refused with `OutOfRange` naming the figure's key: checked directly and through the URL
    /// form, the other figures at their minimum.
    #[test]
    fn custom_figures_are_accepted_exactly_within_their_range(
        (f, v, inside) in proptest::sample::select(CustomFigure::ALL.to_vec()).prop_flat_map(|f| {
            prop_oneof![
                figure_inside(f).prop_map(move |v| (f, v, true)),
                figure_outside(f).prop_map(move |v| (f, v, false)),
            ]
        })
    ) {
        let mut a = custom_at_minimum();
        a.set_figure(f, v);
        let q = a.to_query();
        let through_url = CustomAccelerator::from_query(&q).and_then(|b| b.validate());
        for r in [a.validate(), through_url] {
            match r {
                Ok(_) => prop_assert!(inside, "{} = {v:e} accepted ({q})", f.key()),
                Err(CalcError::OutOfRange { field, .. }) => {
                    prop_assert!(!inside, "{} = {v:e} refused ({q})", f.key());
                    prop_assert_eq!(field.to_string(), f.key());
                }
                Err(e) => prop_assert!(false, "{} = {v:e}: not OutOfRange: {e:?}", f.key()),
            }
        }
    }
}

/// A custom accelerator with every figure at the minimum its range accepts.
fn custom_at_minimum() -> CustomAccelerator {
    let mut a = CustomAccelerator::named("Test".into());
    for f in CustomFigure::ALL {
        a.set_figure(f, f.range().0);
    }
    a
}

/// A value `f` accepts: either end of its range or one between.
fn figure_inside(f: CustomFigure) -> impl Strategy<Value = f64> {
    let (lo, hi) = f.range();
    prop_oneof![1 => Just(lo), 1 => Just(hi), 4 => accepted(f)]
}

/// A value `f` refuses: the nearest numbers outside its range, any below its minimum (negative
/// and zero included) or above its maximum, and the non-finite ones.
fn figure_outside(f: CustomFigure) -> impl Strategy<Value = f64> {
    let (lo, hi) = f.range();
    prop_oneof![
        Just(lo.next_down()),
        Just(hi.next_up()),
        (0.0..lo),
        (-1e308..lo),
        (hi..=1e308).prop_filter("above the maximum", move |v| *v > hi),
        Just(f64::MAX),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
    ]
}

const GPU_IDS: &[&str] = &[
    "a10g",
    "l40s",
    "h100-sxm",
    "a100-sxm-80gb",
    "mi300x",
    "tpu-v5e",
    "rtx-4090",
];

/// `f`'s accepted values, as the core states them.
fn accepted(f: CustomFigure) -> std::ops::RangeInclusive<f64> {
    let (lo, hi) = f.range();
    lo..=hi
}

/// A name the form accepts: printable text of at most `NAME_MAX_CHARS` characters.
fn name_text() -> impl Strategy<Value = String> {
    let pattern = format!("\\PC{{0,{NAME_MAX_CHARS}}}");
    proptest::string::string_regex(&pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"))
}

fn custom_gpu() -> impl Strategy<Value = CustomAccelerator> {
    (
        name_text(),
        accepted(CustomFigure::MemoryGib),
        accepted(CustomFigure::BandwidthGbps),
        accepted(CustomFigure::Bf16Tflops),
        proptest::option::of(accepted(CustomFigure::Fp8Tflops)),
        proptest::option::of(accepted(CustomFigure::PriceUsdPerHour)),
        proptest::option::of(accepted(CustomFigure::TdpW)),
    )
        .prop_map(
            |(
                name,
                memory_gib,
                bandwidth_gbps,
                bf16_tflops,
                fp8_tflops,
                price_usd_per_hour,
                tdp_w,
            )| {
                CustomAccelerator {
                    name,
                    memory_gib,
                    bandwidth_gbps,
                    bf16_tflops,
                    fp8_tflops,
                    price_usd_per_hour,
                    tdp_w,
                }
            },
        )
}

fn gpu() -> impl Strategy<Value = GpuChoice> {
    prop_oneof![
        3 => proptest::sample::select(GPU_IDS).prop_map(|id| GpuChoice::Catalog(id.to_string())),
        1 => "[a-z0-9][a-z0-9._-]{0,30}".prop_map(GpuChoice::Catalog),
        2 => custom_gpu().prop_map(GpuChoice::Custom),
    ]
}

fn dtype() -> impl Strategy<Value = Dtype> {
    proptest::sample::select(Dtype::ALL)
}

fn model() -> impl Strategy<Value = ModelSource> {
    let ids: Vec<String> = llm_serving_calculator::core::model::presets::all()
        .iter()
        .map(|p| p.id.to_string())
        .collect();
    let texts: Vec<String> = llm_serving_calculator::core::model::presets::all()
        .iter()
        .filter_map(|p| serde_json::from_str::<serde_json::Value>(p.json()).ok())
        .filter_map(|v| serde_json::to_string(&v).ok())
        .collect();
    prop_oneof![
        proptest::sample::select(ids).prop_map(ModelSource::Preset),
        (limits::PARAMS.0..=limits::PARAMS.1, dtype())
            .prop_map(|(params, dtype)| ModelSource::Quick { params, dtype }),
        proptest::sample::select(texts).prop_map(ModelSource::Pasted),
    ]
}

fn link() -> impl Strategy<Value = Link> {
    prop_oneof![
        Just(Link::Own),
        proptest::sample::select(InterconnectPreset::ALL).prop_map(Link::Preset),
    ]
}

fn scenario() -> impl Strategy<Value = Scenario> {
    let r = |(lo, hi): (u64, u64)| lo..=hi;
    (
        model(),
        proptest::collection::vec(gpu(), 1..=MAX_GPUS),
        1u32..=1024,
        link(),
        r(limits::CONTEXT_LEN),
        r(limits::CONCURRENCY),
        (proptest::option::of(dtype()), proptest::option::of(dtype())),
        prop_oneof![
            Just(BudgetRule::Textbook),
            (limits::GMU.0..=limits::GMU.1, 1u32..=1024).prop_map(|(g, b)| BudgetRule::Vllm {
                gpu_memory_utilization: g,
                block_size: b
            }),
        ],
        (r(limits::PERF_LEN), r(limits::PERF_LEN), r(limits::BATCH)),
        proptest::option::of(proptest::sample::select(Lang::ALL)),
        prop_oneof![
            Just(ViewMode::Full),
            proptest::sample::select(EmbedWidget::ALL).prop_map(ViewMode::Embed),
        ],
    )
        .prop_map(
            |(
                model,
                mut gpus,
                tp,
                interconnect,
                context_len,
                concurrency,
                (weight_dtype, kv_dtype),
                budget,
                (i, o, b),
                lang,
                view,
            )| {
                // A link lists each GPU once.
                let mut seen = Vec::new();
                gpus.retain(|g| {
                    let dup = seen.contains(g);
                    if !dup {
                        seen.push(g.clone());
                    }
                    !dup
                });
                Scenario {
                    model,
                    gpus,
                    tp,
                    interconnect,
                    context_len,
                    concurrency,
                    weight_dtype,
                    kv_dtype,
                    budget,
                    perf: PerfInputs {
                        input_len: i,
                        output_len: o,
                        batch: b,
                    },
                    lang,
                    // The input strip can only be hidden in embed mode (the full page always
                    // has its inputs); the batch's parity picks it, so both kinds are covered.
                    embed_inputs: view == ViewMode::Full || b % 2 == 0,
                    view,
                    views: Default::default(),
                    include_mtp: b % 3 == 0,
                }
            },
        )
}
