//! The GPU panel: a searchable picker over the catalog (up to four GPUs side by side), the
//! tensor-parallel degree with its interconnect, and the custom-accelerator form.

use crate::core::base::Lang;
use crate::core::hardware::{Accelerator, Catalog, InterconnectPreset, Link};
use crate::core::scenario::{GpuChoice, MAX_GPUS};
use crate::ui::custom_gpu_form::CustomGpuForm;
use crate::ui::state::{use_app, AppState, History};
use crate::ui::view_common::num_symbols;
use leptos::prelude::*;

/// Tensor-parallel degrees offered.
const TP_CHOICES: &[u32] = &[1, 2, 4, 8, 16, 32, 64];

/// Whether an accelerator matches a search query (name, id, vendor, aliases; ignoring ASCII
/// case, spaces and punctuation). Letters outside ASCII are compared as typed: the catalog's
/// names are ASCII, and full Unicode case folding ships about 5 KB (brotli) of tables.
fn matches(a: &Accelerator, q: &str) -> bool {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| !c.is_ascii() || c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let q = norm(q);
    q.is_empty()
        || norm(&a.name).contains(&q)
        || norm(&a.id).contains(&q)
        || norm(&a.vendor).contains(&q)
        || a.aliases.iter().any(|al| norm(al).contains(&q))
}

/// The GPU panel.
#[component]
pub fn GpuPicker() -> impl IntoView {
    let state = use_app();
    view! {
        <section class="panel gpu-panel" aria-labelledby="gpu-title" data-testid="gpu-picker">
            <h2 id="gpu-title">{move || state.tr("ui_section_gpus")}</h2>
            <SelectedGpus />
            <GpuSearch />
            <div class="field-row">
                <TpField />
                <InterconnectField />
            </div>
            <CustomGpuForm />
        </section>
    }
}

/// The GPUs compared, as chips with a remove button (the last one cannot be removed).
#[component]
fn SelectedGpus() -> impl IntoView {
    let state = use_app();
    // A memo: a change elsewhere in the scenario (a context length, say) does not rebuild the
    // chips.
    let gpus = Memo::new(move |_| state.scenario.with(|s| s.gpus.clone()));
    let remove = move |index: usize| {
        state.edit(History::Push, |s| {
            if s.gpus.len() > 1 && index < s.gpus.len() {
                s.gpus.remove(index);
            }
        });
    };
    let selected = move || {
        gpus.with(|list| {
            list.iter()
                .enumerate()
                .map(|(i, g)| {
                    let key = g.key(i);
                    let name = match g {
                        GpuChoice::Catalog(id) => Catalog::builtin()
                            .get(id)
                            .map(|a| a.name.clone())
                            .unwrap_or_else(|_| id.clone()),
                        GpuChoice::Custom(c) => c.name.clone(),
                    };
                    let can_remove = list.len() > 1;
                    view! {
                        <li class="chip" data-testid=format!("gpu-selected-{key}")>
                            <span>{name}</span>
                            <button
                                type="button"
                                class="chip-remove"
                                data-testid=format!("gpu-remove-{key}")
                                disabled=!can_remove
                                aria-label=move || state.tr("gpu_remove")
                                on:click=move |_| remove(i)
                            >
                                "×"
                            </button>
                        </li>
                    }
                })
                .collect_view()
        })
    };
    view! { <ul class="chips" data-testid="gpu-selected">{selected}</ul> }
}

/// The search box over the catalog and the matching GPUs, each a button that adds it.
#[component]
fn GpuSearch() -> impl IntoView {
    let state = use_app();
    let query = RwSignal::new(String::new());
    // Slices of the scenario the picker shows, as memos: a change elsewhere in the scenario
    // (a context length, say) does not rebuild the catalog's option list.
    let full = Memo::new(move |_| state.scenario.with(|s| s.gpus.len() >= MAX_GPUS));
    let chosen = Memo::new(move |_| {
        state.scenario.with(|s| {
            s.gpus
                .iter()
                .filter_map(|g| match g {
                    GpuChoice::Catalog(id) => Some(id.clone()),
                    GpuChoice::Custom(_) => None,
                })
                .collect::<Vec<String>>()
        })
    });
    let add = move |id: String| {
        state.edit(History::Push, |s| {
            let g = GpuChoice::Catalog(id);
            if s.gpus.len() < MAX_GPUS && !s.gpus.contains(&g) {
                s.gpus.push(g);
            }
        });
    };
    // The catalog's list (46 buttons with their facts) is not part of the first answer: it is
    // built in the page's fill step (ui::late::provide_steps), inside a box of the list's final
    // height (`.gpu-options-filling`), so nothing below it moves when it arrives.
    let filled = crate::ui::late::after_fill();
    let options = move || {
        if !filled.get() {
            return ().into_any();
        }
        let q = query.get();
        let chosen = chosen.get();
        let lang = state.lang.get();
        // Read once for the whole list: a reactive `disabled` per button made each of the 45
        // re-check the memo on every edit of the scenario (docs/history/PERF_UI.md).
        let full_now = full.get();
        let list: Vec<_> = Catalog::builtin()
            .accelerators
            .iter()
            .filter(|a| matches(a, &q))
            .map(|a| {
                let id = a.id.clone();
                let is_chosen = chosen.contains(&a.id);
                let facts = gpu_facts(state, lang, a);
                view! {
                    <li>
                        <button
                            type="button"
                            class="gpu-option"
                            data-testid=format!("gpu-option-{}", a.id)
                            disabled=is_chosen || full_now
                            aria-pressed=is_chosen.to_string()
                            on:click=move |_| add(id.clone())
                        >
                            <span class="gpu-name">{a.name.clone()}</span>
                            <span class="gpu-facts">{facts}</span>
                        </button>
                    </li>
                }
            })
            .collect();
        if list.is_empty() {
            view! { <li class="muted">{crate::core::base::tr(lang, "gpu_no_match")}</li> }
                .into_any()
        } else {
            list.into_view().into_any()
        }
    };
    view! {
        <div class="field">
            <label for="gpu-search">{move || state.tr("gpu_search_label")}</label>
            <input
                id="gpu-search"
                type="search"
                data-testid="gpu-search"
                autocomplete="off"
                placeholder=move || state.tr("gpu_search_placeholder")
                prop:value=move || query.get()
                on:input=move |ev| query.set(event_target_value(&ev))
            />
            {move || full.get().then(|| view! {
                <p class="muted" role="status">{move || state.tr("gpu_max_reached")}</p>
            })}
            <ul
                class="gpu-options"
                class:gpu-options-filling=move || !filled.get()
                aria-busy=move || (!filled.get()).then_some("true")
                data-testid="gpu-options"
            >
                {options}
            </ul>
        </div>
    }
}

/// An accelerator's memory, bandwidth and hourly price, as one line.
fn gpu_facts(state: AppState, lang: Lang, a: &Accelerator) -> String {
    let price = a
        .price
        .as_ref()
        .map(|p| format!("${}/h", num_symbols(state).sig(p.usd_per_hour)))
        .unwrap_or_else(|| crate::core::base::tr(lang, "gpu_price_unknown").to_string());
    format!(
        "{} · {} GB/s · {}",
        a.capacity().fmt_gib(),
        num_symbols(state).sig(a.bandwidth.gbps()),
        price
    )
}

/// The tensor-parallel degree, one of [`TP_CHOICES`].
#[component]
fn TpField() -> impl IntoView {
    let state = use_app();
    let tp = Memo::new(move |_| state.scenario.with(|s| s.tp));
    let tp_value = move || tp.get().to_string();
    let on_tp = move |ev: leptos::ev::Event| {
        if let Ok(n) = event_target_value(&ev).parse::<u32>() {
            if TP_CHOICES.contains(&n) {
                state.edit(History::Push, |s| s.tp = n);
            }
        }
    };
    view! {
        <div class="field">
            <label for="tp">{move || state.tr("gpu_tp")}</label>
            <select id="tp" data-testid="tp" prop:value=tp_value on:change=on_tp>
                {TP_CHOICES
                    .iter()
                    .map(|n| {
                        let n = *n;
                        view! {
                            <option
                                value=n.to_string()
                                selected=move || tp.get() == n
                            >
                                {n.to_string()}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
        </div>
    }
}

/// The interconnect between the tensor-parallel GPUs: each GPU's own, or a preset.
#[component]
fn InterconnectField() -> impl IntoView {
    let state = use_app();
    let link = Memo::new(move |_| state.scenario.with(|s| s.interconnect));
    let ic_value = move || match link.get() {
        Link::Own => "own".to_string(),
        Link::Preset(p) => p.id().to_string(),
    };
    let on_ic = move |ev: leptos::ev::Event| {
        let v = event_target_value(&ev);
        let link = if v == "own" {
            Some(Link::Own)
        } else {
            InterconnectPreset::parse(&v).map(Link::Preset)
        };
        if let Some(l) = link {
            state.edit(History::Push, |s| s.interconnect = l);
        }
    };
    view! {
        <div class="field">
            <label for="interconnect">{move || state.tr("gpu_interconnect")}</label>
            <select
                id="interconnect"
                data-testid="interconnect"
                prop:value=ic_value
                on:change=on_ic
            >
                <option value="own" selected=move || ic_value() == "own">
                    {move || state.tr("ic_own")}
                </option>
                {InterconnectPreset::ALL
                    .iter()
                    .map(|p| {
                        let p = *p;
                        view! {
                            <option value=p.id() selected=move || ic_value() == p.id()>
                                {move || state.tr(p.description_key())}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
        </div>
    }
}
