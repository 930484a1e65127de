//! The inputs of "Serving under load": the engine (vLLM, SGLang or TensorRT-LLM) and its knobs,
//! speculative decoding (off, MTP, EAGLE-3 or n-gram, with its drafts and accepted length),
//! disaggregated prefill and decode (off, or two pools with their workers, TP and KV link),
//! named as it names its flags (0 = its default where it picks one per GPU), the arrivals and lengths as
//! `vllm bench serve` names them. They live in the scenario (URL `sv_…`); a bad value gives a
//! sentence beside its field and is not used, so the last good result stays.

use crate::core::base::{fill, fmt_sig, tr};
use crate::core::present::link_label_key;
use crate::core::scenario::{ArrivalKind, DatasetKind, ServField, KV_LINKS};
use crate::core::sim::{EngineKind, SpecMethod};
use crate::ui::float_field::FloatField;
use crate::ui::state::{use_app, AppState, History};
use leptos::prelude::*;

/// The serving inputs.
#[component]
pub fn ServingControls() -> impl IntoView {
    let state = use_app();
    // The newest refusal beyond a field's range (whole numbers, warm-up below the count).
    let refused: RwSignal<Option<(ServField, f64)>> = RwSignal::new(None);
    let engine = Memo::new(move |_| state.scenario.with(|s| s.views.serving.engine));
    let spec = Memo::new(move |_| state.scenario.with(|s| s.views.serving.spec));
    let disagg = Memo::new(move |_| state.scenario.with(|s| s.views.serving.disagg));
    // Rebuilt when the engine changes (its knobs' names, and only the fields that apply) or
    // speculative decoding or disaggregation is turned on or off (their fields).
    let shown = Memo::new(move |_| (engine.get(), spec.get().is_some(), disagg.get()));
    let fields = move || {
        let (e, _, _) = shown.get();
        let v = state.scenario.with_untracked(|s| s.views.serving);
        ServField::ALL
        .iter()
        .filter(|f| f.shown(&v))
        .map(|f| {
            let f = *f;
            view! {
                <FloatField
                    id=format!("sv-{}", f.query_key().trim_start_matches("sv_"))
                    label_key=f.label_key_for(e)
                    unit_key=f.unit_key_for(e)
                    value=Signal::derive(move || state.scenario.with(|s| f.get(&s.views.serving)))
                    range=f.range()
                    on_commit=move |v: f64| {
                        // Whole-number and warm-up checks beyond the range: a value that fails
                        // them is not used (the field keeps the text; the result stays).
                        let ok = state.scenario.with_untracked(|s| f.check(&s.views.serving, v));
                        if let Ok(v) = ok {
                            refused.update(|r| if r.is_some_and(|(g, _)| g == f) { *r = None });
                            state.edit(History::Replace, |s| f.set(&mut s.views.serving, v));
                        } else {
                            refused.set(Some((f, v)));
                        }
                    }
                />
            }
        })
        .collect_view()
    };
    let on_engine = move |ev: leptos::ev::Event| {
        if let Some(k) = EngineKind::from_id(&event_target_value(&ev)) {
            state.edit(History::Push, |s| s.views.serving.set_engine(k));
        }
    };
    let on_spec = move |ev: leptos::ev::Event| {
        let m = SpecMethod::parse(&event_target_value(&ev));
        state.edit(History::Push, |s| s.views.serving.spec = m);
    };
    let arrival = Signal::derive(move || state.scenario.with(|s| s.views.serving.arrival));
    let dataset = Signal::derive(move || state.scenario.with(|s| s.views.serving.dataset));
    let on_arrival = move |ev: leptos::ev::Event| {
        if let Some(k) = ArrivalKind::parse(&event_target_value(&ev)) {
            state.edit(History::Push, |s| s.views.serving.arrival = k);
        }
    };
    let on_dataset = move |ev: leptos::ev::Event| {
        if let Some(k) = DatasetKind::parse(&event_target_value(&ev)) {
            state.edit(History::Push, |s| s.views.serving.dataset = k);
        }
    };
    view! {
        <div class="view-controls serving-controls">
            <div class="field">
                <label for="sv-engine">{move || state.tr("sv_engine_choice")}</label>
                <select id="sv-engine" data-testid="sv-engine" on:change=on_engine>
                    {EngineKind::ALL.iter().map(|k| {
                        let k = *k;
                        view! { <option value=k.id() selected=move || engine.get() == k>{format!("{} {}", k.name(), k.version())}</option> }
                    }).collect_view()}
                </select>
            </div>
            <div class="field">
                <label for="sv-spec">{move || state.tr("sv_spec_choice")}</label>
                <select id="sv-spec" data-testid="sv-spec" on:change=on_spec>
                    <option value="off" selected=move || spec.get().is_none()>{move || state.tr("sv_spec_off")}</option>
                    {SpecMethod::ALL.iter().map(|&(id, m)| {
                        let key = match m {
                            SpecMethod::Mtp => "sv_spec_mtp",
                            SpecMethod::Eagle3 => "sv_spec_eagle3",
                            SpecMethod::Ngram => "sv_spec_ngram",
                        };
                        view! { <option value=id selected=move || spec.get() == Some(m)>{move || state.tr(key)}</option> }
                    }).collect_view()}
                </select>
            </div>
            <DisaggSelects disagg=disagg />
            <div class="field">
                <label for="sv-arr">{move || state.tr("sv_arrival")}</label>
                <select id="sv-arr" data-testid="sv-arr" on:change=on_arrival>
                    {ArrivalKind::ALL.iter().map(|k| {
                        let k = *k;
                        view! { <option value=k.id() selected=move || arrival.get() == k>{move || state.tr(k.label_key())}</option> }
                    }).collect_view()}
                </select>
            </div>
            <div class="field">
                <label for="sv-ds">{move || state.tr("sv_dataset")}</label>
                <select id="sv-ds" data-testid="sv-ds" on:change=on_dataset>
                    {DatasetKind::ALL.iter().map(|k| {
                        let k = *k;
                        view! { <option value=k.id() selected=move || dataset.get() == k>{move || state.tr(k.label_key())}</option> }
                    }).collect_view()}
                </select>
            </div>
            {fields}
            {move || refusal(state, refused.get()).map(|m| view! {
                <p class="field-error" role="alert" data-testid="sv-refused">{m}</p>
            })}
        </div>
    }
}

/// Disaggregation's toggle (off, or a prefill and a decode pool) and, when it is on, the KV
/// link's select (auto, NVLink, InfiniBand, RoCE); the pools' workers and TP are fields.
#[component]
fn DisaggSelects(
    /// Whether disaggregation is on.
    disagg: Memo<bool>,
) -> impl IntoView {
    let state = use_app();
    let link = Memo::new(move |_| state.scenario.with(|s| s.views.serving.kv_link));
    let on_disagg = move |ev: leptos::ev::Event| {
        let on = event_target_value(&ev) == "on";
        state.edit(History::Push, |s| s.views.serving.disagg = on);
    };
    let on_link = move |ev: leptos::ev::Event| {
        let id = event_target_value(&ev);
        let l = KV_LINKS.into_iter().find(|l| l.id() == id);
        state.edit(History::Push, |s| s.views.serving.kv_link = l);
    };
    view! {
        <div class="field">
            <label for="sv-disagg">{move || state.tr("sv_pd_choice")}</label>
            <select id="sv-disagg" data-testid="sv-disagg" on:change=on_disagg>
                <option value="off" selected=move || !disagg.get()>{move || state.tr("sv_spec_off")}</option>
                <option value="on" selected=move || disagg.get()>{move || state.tr("sv_pd_on")}</option>
            </select>
        </div>
        {move || disagg.get().then(|| view! {
            <div class="field">
                <label for="sv-kvl">{move || state.tr("sv_link_choice")}</label>
                <select id="sv-kvl" data-testid="sv-kvl" on:change=on_link>
                    <option value="auto" selected=move || link.get().is_none()>{move || state.tr("sv_link_auto")}</option>
                    {KV_LINKS.into_iter().map(|l| view! {
                        <option value=l.id() selected=move || link.get() == Some(l)>{move || state.tr(link_label_key(l))}</option>
                    }).collect_view()}
                </select>
            </div>
        })}
    }
}

/// The sentence of a refused value (`None` when nothing is refused).
fn refusal(state: AppState, r: Option<(ServField, f64)>) -> Option<String> {
    let (f, x) = r?;
    let lang = state.lang.get();
    state.scenario.with(|s| {
        let v = &s.views.serving;
        f.refusal_key(v, x).map(|k| {
            fill(
                tr(lang, k),
                &[
                    ("field", tr(lang, f.label_key_for(v.engine))),
                    ("value", &fmt_sig(x)),
                    ("n", &v.num_requests.to_string()),
                    ("warm", &v.warmup.to_string()),
                ],
            )
        })
    })
}
