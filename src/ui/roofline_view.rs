//! The interactive roofline (log–log): each compared GPU's bandwidth slope and ceilings, the
//! scenario's prefill and decode points (whole model and per operator) with trails from batch
//! 1, batch and context sliders bound to the scenario (so the URL carries them), a readout of
//! the decode point's intensity, and "Show the math" for any point.

use crate::core::base::fill;
use crate::core::base::CalcError;
use crate::core::present::log2_pos;
use crate::core::present::RooflineData;
use crate::core::present::Section;
use crate::core::present::{roofline_view, OpsShown, PointDetail, RooflineView as ViewData};
use crate::core::scenario::{limits, Scenario};
use crate::ui::chart_canvas::ChartCanvas;
use crate::ui::explanation::Explanation;
use crate::ui::in_view::{gated_memo, section_in_view};
use crate::ui::math_panel::MathPanel;
use crate::ui::number_field::log2_value;
use crate::ui::state::{use_app, AppState, History};
use crate::ui::view_common::{gpus_memo, is_dark, model_memo, num_symbols};
use leptos::prelude::*;

/// Batch slider: 2^0 … 2^10.
const BATCH_LOG2: (u32, u32) = (0, 10);
/// Context slider: 2^6 … 2^17 tokens.
const CONTEXT_LOG2: (u32, u32) = (6, 17);

/// What the view shows: the roofline's data and details, or the model's error (`None` without
/// a model).
type Computed = Memo<Option<Result<ViewData, CalcError>>>;

/// The decode and prefill intensities and the ridge point, formatted ("—" when unknown).
fn readout_of(state: AppState, computed: Computed) -> (String, String, String) {
    computed.with(|c| match c {
        Some(Ok(v)) => (
            num_symbols(state).sig(v.decode_intensity),
            num_symbols(state).sig(v.prefill_intensity),
            if v.ridge.is_finite() && v.ridge > 0.0 {
                num_symbols(state).sig(v.ridge)
            } else {
                "—".into()
            },
        ),
        _ => ("—".into(), "—".into(), "—".into()),
    })
}

/// The interactive roofline view.
#[component]
pub fn RooflineView() -> impl IntoView {
    let state = use_app();
    let model = model_memo(state);
    let gpus = gpus_memo(state);
    let ops = RwSignal::new(OpsShown::Decode);
    let picked: RwSignal<Option<String>> = RwSignal::new(None);
    // Computed only while the section is on screen (ui::in_view).
    let visible = section_in_view();
    let computed: Computed = gated_memo(visible, move || {
        let lang = state.lang.get();
        let shown = ops.get();
        model.with(|m| {
            m.as_ref().map(|m| {
                state
                    .scenario
                    .with(|s| gpus.with(|g| roofline_view(m, s, g, shown, lang)))
            })
        })
    });
    let chart: Memo<RooflineData> = Memo::new(move |_| {
        computed.with(|c| match c {
            Some(Ok(v)) => v.data.clone(),
            _ => RooflineData::default(),
        })
    });
    let error = move || {
        computed.with(|c| match c {
            Some(Err(e)) => Some(e.message(state.lang.get())),
            _ => None,
        })
    };
    let explain = move || {
        let (d, p, r) = readout_of(state, computed);
        let batch = state.scenario.with(|s| s.perf.batch);
        let gpu = computed.with(|c| match c {
            Some(Ok(v)) => v.anchor_name.clone(),
            _ => String::new(),
        });
        fill(
            state.tr("view_roof_explain"),
            &[
                ("decode", &d),
                ("prefill", &p),
                ("ridge", &r),
                ("batch", &num_symbols(state).group(batch)),
                ("gpu", &gpu),
            ],
        )
    };
    let on_chart_pick = Callback::new(move |id: String| {
        // Workload points explain themselves (a trail's start stands for its point); ridge
        // regions do not.
        let id = id
            .strip_suffix("/batch1")
            .map_or(id.clone(), str::to_string);
        let known =
            computed.with(|c| matches!(c, Some(Ok(v)) if v.details.iter().any(|d| d.name == id)));
        if known {
            picked.set(Some(id));
        }
    });
    let title = Signal::derive(move || state.tr("view_roof_title").to_string());
    let dark = is_dark(state);
    view! {
        <section class="panel view roofline-view" aria-labelledby="roofline-title" data-testid="roofline-view">
            <h2 id="roofline-title">{move || state.tr("view_roof_title")}</h2>
            <RooflineControls ops=ops />
            <Readout computed=computed />
            {move || error().map(|m| view! { <p class="calc-error" role="alert">{m}</p> })}
            <div class="chart-box">
                <ChartCanvas<RooflineData>
                    data=Signal::from(chart)
                    lang=state.lang
                    dark=dark
                    title=title
                    test_id="chart-roofline"
                    on_pick=on_chart_pick
                />
            </div>
            <p class="explain" data-testid="roofline-explain">{explain}</p>
            <Explanation section=Section::Roofline />
            <PointPicker computed=computed picked=picked />
            <PointMath computed=computed picked=picked />
        </section>
    }
}

/// The batch and context sliders (powers of two, bound to the scenario) and the choice of
/// operators shown.
#[component]
fn RooflineControls(
    /// Which operators the chart shows.
    ops: RwSignal<OpsShown>,
) -> impl IntoView {
    let state = use_app();
    let on_ops = move |ev: leptos::ev::Event| {
        if let Some(o) = OpsShown::from_id(&event_target_value(&ev)) {
            ops.set(o);
        }
    };
    view! {
        <div class="view-controls">
            <Log2Slider
                id="roofline-batch"
                label_key="view_roof_batch"
                exp=BATCH_LOG2
                range=limits::BATCH
                get=|s| s.perf.batch
                set=|s, n| s.perf.batch = n
            />
            <Log2Slider
                id="roofline-context"
                label_key="view_roof_context"
                unit_key="view_unit_tokens"
                exp=CONTEXT_LOG2
                range=limits::CONTEXT_LEN
                get=|s| s.context_len
                set=|s, n| s.context_len = n
            />
            <div class="field">
                <label for="roofline-ops">{move || state.tr("view_roof_ops")}</label>
                <select id="roofline-ops" data-testid="roofline-ops" on:change=on_ops>
                    {OpsShown::ALL
                        .iter()
                        .map(|o| {
                            let o = *o;
                            view! {
                                <option value=o.id() selected=move || ops.get() == o>
                                    {move || state.tr(o.label_key())}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
            </div>
        </div>
    }
}

/// A slider in powers of two bound to one number of the scenario: its label with the value
/// (grouped) and an optional unit, the position at the value's exponent clamped to `exp`, and
/// the value it sets clamped to `range` (URL history replaced, not pushed).
#[component]
fn Log2Slider(
    /// Element id and `data-testid` of the slider; `{id}-value` is the value shown.
    id: &'static str,
    /// Translation key of the label.
    label_key: &'static str,
    /// Translation key of the unit after the value, if any.
    #[prop(optional)]
    unit_key: Option<&'static str>,
    /// Slider bounds as powers of two (exponents).
    exp: (u32, u32),
    /// Accepted values, inclusive.
    range: (u64, u64),
    /// Where the scenario holds the value.
    get: fn(&Scenario) -> u64,
    /// How the slider writes it.
    set: fn(&mut Scenario, u64),
) -> impl IntoView {
    let state = use_app();
    let value = move || state.scenario.with(get);
    let on_input = move |ev: leptos::ev::Event| {
        if let Some(n) = log2_value(&event_target_value(&ev), exp, range) {
            state.edit(History::Replace, |s| set(s, n));
        }
    };
    view! {
        <div class="field slider-field">
            <label for=id>
                {move || state.tr(label_key)}": "
                <strong data-testid=format!("{id}-value")>{move || num_symbols(state).group(value())}</strong>
                {unit_key.map(|k| view! { " "{move || state.tr(k)} })}
            </label>
            <input
                id=id
                data-testid=id
                type="range"
                min=exp.0.to_string()
                max=exp.1.to_string()
                step="1"
                aria-valuetext=move || num_symbols(state).group(value())
                prop:value=move || log2_pos(value(), exp).to_string()
                on:input=on_input
            />
        </div>
    }
}

/// The decode and prefill intensities and the ridge point, in FLOP per byte.
#[component]
fn Readout(
    /// What the view shows.
    computed: Computed,
) -> impl IntoView {
    let state = use_app();
    let readout = move || readout_of(state, computed);
    view! {
        <p class="readout">
            {move || state.tr("view_roof_decode_intensity")}": "
            <output data-testid="roofline-decode-intensity">{move || readout().0}</output>
            " FLOP/B · "
            {move || state.tr("view_roof_prefill_intensity")}": "
            <output data-testid="roofline-prefill-intensity">{move || readout().1}</output>
            " FLOP/B · "
            {move || state.tr("chart_ridge")}": "
            <output data-testid="roofline-ridge">{move || readout().2}</output>
            " FLOP/B"
        </p>
    }
}

/// The choice of the point whose math is shown (also set by clicking the chart).
#[component]
fn PointPicker(
    /// What the view shows (its points' names are the options).
    computed: Computed,
    /// The point picked, by name.
    picked: RwSignal<Option<String>>,
) -> impl IntoView {
    let state = use_app();
    let names = move || {
        computed.with(|c| match c {
            Some(Ok(v)) => v.details.iter().map(|d| d.name.clone()).collect::<Vec<_>>(),
            _ => Vec::new(),
        })
    };
    let on_pick = move |ev: leptos::ev::Event| {
        let v = event_target_value(&ev);
        picked.set((!v.is_empty()).then_some(v));
    };
    view! {
        <div class="field">
            <label for="roofline-point">{move || state.tr("view_roof_pick")}</label>
            <select id="roofline-point" data-testid="roofline-point" on:change=on_pick>
                <option value="" selected=move || picked.with(Option::is_none)>
                    {move || state.tr("view_roof_pick_none")}
                </option>
                {move || {
                    names()
                        .into_iter()
                        .map(|n| {
                            let sel = n.clone();
                            let value = n.clone();
                            view! {
                                <option value=value selected=move || picked.with(|p| p.as_deref() == Some(sel.as_str()))>
                                    {n}
                                </option>
                            }
                        })
                        .collect_view()
                }}
            </select>
        </div>
    }
}

/// The math behind the point picked, each derivation open.
#[component]
fn PointMath(
    /// What the view shows (its points' details).
    computed: Computed,
    /// The point picked, by name.
    picked: RwSignal<Option<String>>,
) -> impl IntoView {
    let detail = move || -> Option<PointDetail> {
        let name = picked.get()?;
        computed.with(|c| match c {
            Some(Ok(v)) => v.details.iter().find(|d| d.name == name).cloned(),
            _ => None,
        })
    };
    view! {
        {move || {
            detail()
                .map(|d| {
                    view! {
                        <div class="point-math" data-testid="roofline-math">
                            <p><strong>{d.name.clone()}</strong></p>
                            {d
                                .derivations
                                .into_iter()
                                .enumerate()
                                .map(|(i, der)| view! {
                                    <MathPanel derivation=Some(der) testid=format!("math-roofline-{i}") open=true />
                                })
                                .collect_view()}
                        </div>
                    }
                })
        }}
    }
}
