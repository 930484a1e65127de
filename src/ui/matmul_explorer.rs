//! The matmul explorer: M, N, K inputs (and the textbook's examples one click away) place a
//! half-precision matmul on the roofline and show intensity = M·N·K / (M·K + K·N + M·N).

use crate::core::base::fill;
use crate::core::calc::Matmul;
use crate::core::present::{matmul_view, MatmulView};
use crate::core::present::{RooflineData, MATMUL_PRESETS};
use crate::core::scenario::MATMUL_DIM;
use crate::ui::chart_canvas::ChartCanvas;
use crate::ui::math_panel::MathPanel;
use crate::ui::number_field::NumberField;
use crate::ui::state::{use_app, History};
use crate::ui::view_common::{gpus_memo, is_dark, num_symbols};
use leptos::prelude::*;

/// Which matmul dimension a field edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dim {
    M,
    N,
    K,
}

impl Dim {
    const ALL: &'static [Dim] = &[Dim::M, Dim::N, Dim::K];

    const fn id(self) -> &'static str {
        match self {
            Dim::M => "matmul-m",
            Dim::N => "matmul-n",
            Dim::K => "matmul-k",
        }
    }

    const fn label_key(self) -> &'static str {
        match self {
            Dim::M => "view_matmul_m",
            Dim::N => "view_matmul_n",
            Dim::K => "view_matmul_k",
        }
    }

    fn get(self, s: Matmul) -> u64 {
        match self {
            Dim::M => s.m,
            Dim::N => s.n,
            Dim::K => s.k,
        }
    }

    fn set(self, s: &mut Matmul, v: u64) {
        match self {
            Dim::M => s.m = v,
            Dim::N => s.n = v,
            Dim::K => s.k = v,
        }
    }
}

/// The matmul explorer.
#[component]
pub fn MatmulExplorer() -> impl IntoView {
    let state = use_app();
    let gpus = gpus_memo(state);
    let shape = Memo::new(move |_| state.scenario.with(|s| s.views.matmul));
    let computed: Memo<MatmulView> = Memo::new(move |_| {
        let lang = state.lang.get();
        gpus.with(|g| matmul_view(shape.get(), g, lang))
    });
    let chart: Memo<RooflineData> = Memo::new(move |_| computed.with(|c| c.data.clone()));
    let fields = Dim::ALL
        .iter()
        .map(|d| {
            let d = *d;
            view! {
                <NumberField
                    id=d.id()
                    label_key=d.label_key()
                    unit_key="view_unit_elements"
                    value=Signal::derive(move || d.get(shape.get()))
                    range=MATMUL_DIM
                    on_commit=move |v: u64| state.edit(History::Replace, |s| d.set(&mut s.views.matmul, v))
                />
            }
        })
        .collect_view();
    let presets = MATMUL_PRESETS
        .iter()
        .map(|p| {
            let mm = p.matmul;
            let key = p.label_key;
            let testid = format!("matmul-preset-{}", key.trim_start_matches("matmul_"));
            view! {
                <button
                    type="button"
                    class="chip"
                    data-testid=testid
                    aria-pressed=move || (shape.get() == mm).to_string()
                    on:click=move |_| {
                        state.edit(History::Push, |s| {
                            s.views.matmul = mm
                        })
                    }
                >
                    {move || state.tr(key)}
                </button>
            }
        })
        .collect_view();
    let formula = move || {
        let s = shape.get();
        format!(
            "I = M·N·K / (M·K + K·N + M·N) = {}·{}·{} / ({}·{} + {}·{} + {}·{})",
            num_symbols(state).group(s.m),
            num_symbols(state).group(s.n),
            num_symbols(state).group(s.k),
            num_symbols(state).group(s.m),
            num_symbols(state).group(s.k),
            num_symbols(state).group(s.k),
            num_symbols(state).group(s.n),
            num_symbols(state).group(s.m),
            num_symbols(state).group(s.n)
        )
    };
    let verdict = move || {
        computed.with(|c| {
            let key = if c.compute_bound {
                "view_matmul_compute_bound"
            } else {
                "view_matmul_memory_bound"
            };
            fill(
                state.tr(key),
                &[
                    ("ridge", &num_symbols(state).sig(c.ridge)),
                    ("gpu", &c.anchor_name),
                ],
            )
        })
    };
    let title = Signal::derive(move || state.tr("view_matmul_title").to_string());
    let dark = is_dark(state);
    view! {
        <section class="panel view matmul-view" aria-labelledby="matmul-title" data-testid="matmul-view">
            <h2 id="matmul-title">{move || state.tr("view_matmul_title")}</h2>
            <div class="chips" role="group" aria-label=move || state.tr("view_matmul_presets")>{presets}</div>
            <div class="view-controls">{fields}</div>
            <p class="readout">
                {move || state.tr("view_matmul_intensity")}": "
                <output data-testid="matmul-intensity">{move || computed.with(|c| num_symbols(state).sig(c.intensity))}</output>
                " FLOP/B"
            </p>
            <p class="formula"><code data-testid="matmul-formula">{formula}</code></p>
            <p class="explain">{verdict}</p>
            <div class="chart-box">
                <ChartCanvas<RooflineData>
                    data=Signal::from(chart)
                    lang=state.lang
                    dark=dark
                    title=title
                    test_id="chart-matmul"
                />
            </div>
            {move || computed.with(|c| view! {
                <MathPanel derivation=Some(c.derivation.clone()) testid="math-matmul-intensity" />
            })}
        </section>
    }
}
