//! Per compared GPU, the performance model at every tensor-parallel degree that splits the
//! model evenly (`core::views::tp_tables`): the memory-allowed batch, TTFT, TPOT, tokens/s
//! per user and in total, end-to-end latency and cost per million output tokens, with the
//! scenario's degree marked and the notes of the rows under each table.

use crate::core::calc::{PerfReport, TpRow};
use crate::core::present::TpTable;
use crate::ui::perf_notes::PerfNotes;
use crate::ui::state::use_app;
use crate::ui::view_common::{fmt_ms, fmt_num, fmt_usd, num_symbols};
use leptos::prelude::*;

/// The cells after the TP degree of one row.
fn row_cells(row: TpRow) -> AnyView {
    let state = use_app();
    let t = move |k: &'static str| move || state.tr(k);
    match row.result {
        Err(e) => view! {
            <td colspan="7" class="calc-error">{move || e.message(state.lang.get())}</td>
        }
        .into_any(),
        Ok(rep) if rep.max_batch == 0 => view! {
            <td class="num">"0"</td>
            <td colspan="6" class="bad" data-testid="tp-no-fit">{t("view_tp_model_no_fit")}</td>
        }
        .into_any(),
        Ok(rep) => timed_cells(&rep),
    }
}

fn timed_cells(rep: &PerfReport) -> AnyView {
    let state = use_app();
    let t = move |k: &'static str| move || state.tr(k);
    let fits = rep.fits;
    let lower = rep.compute_untimed();
    let cost = fits.then_some(rep.usd_per_million_tokens).flatten();
    let nf = num_symbols(state);
    view! {
        <td class="num" data-testid="tp-max-batch">
            {rep.max_batch.to_string()}
            {(!fits).then(|| view! { <br /><small class="bad">{t("view_perf_batch_no_fit")}</small> })}
        </td>
        <td class="num">
            {lower.then(|| view! { <abbr class="bad" data-testid="tp-lower-bound" title=t("view_perf_lower_bound")>"≥ "</abbr> })}
            <span data-testid="tp-ttft">{fmt_ms(nf, rep.ttft.ms())}</span>
        </td>
        <td class="num" data-testid="tp-tpot">{fmt_ms(nf, rep.tpot.ms())}</td>
        <td class="num">{fmt_num(nf, rep.output_tokens_per_s_per_user)}</td>
        <td class="num" data-testid="tp-tps">{fmt_num(nf, rep.output_tokens_per_s)}</td>
        <td class="num">{fmt_ms(nf, rep.e2e.ms())}</td>
        <td class="num" data-testid="tp-usd-per-mtok">{fmt_usd(cost)}</td>
    }
    .into_any()
}

/// One table per compared GPU over its tensor-parallel degrees.
#[component]
pub fn TpSweep(
    /// The tables, one per compared GPU.
    #[prop(into)]
    tables: Signal<Vec<TpTable>>,
) -> impl IntoView {
    let state = use_app();
    let t = move |k: &'static str| move || state.tr(k);
    view! {
        <div class="tp-sweep" data-testid="tp-sweep">
            <h3>{t("view_tp_title")}</h3>
            <p class="explain">{t("view_tp_explain")}</p>
            {move || tables.get().into_iter().map(|tb| {
                    let rows = tb
                        .rows
                        .into_iter()
                        .map(|r| {
                            let tp = r.tp;
                            let chosen = r.chosen;
                            let no_fit = !r.model_fits();
                            view! {
                                <tr data-testid=format!("tp-row-{tp}") class:chosen=chosen class:no-fit=no_fit>
                                    <th scope="row">
                                        {tp.to_string()}
                                        {chosen.then(|| view! { <br /><small data-testid="tp-chosen">{t("view_tp_chosen")}</small> })}
                                    </th>
                                    {row_cells(r)}
                                </tr>
                            }
                        })
                        .collect_view();
                    view! {
                        <div class="table-wrap" tabindex="0" role="region" aria-label=tb.name.clone()>
                            <table class="perf-table tp-table" data-testid=format!("tp-table-{}", tb.key)>
                                <caption>{tb.name.clone()}</caption>
                                <thead>
                                    <tr>
                                        <th scope="col">{t("view_tp_degree")}</th>
                                        <th scope="col">{t("perf_max_batch")}</th>
                                        <th scope="col">{t("perf_ttft")}</th>
                                        <th scope="col">{t("perf_tpot")}</th>
                                        <th scope="col">{t("perf_tokens_per_s_per_user")}</th>
                                        <th scope="col">{t("perf_output_tokens_per_s")}</th>
                                        <th scope="col">{t("perf_e2e_latency")}</th>
                                        <th scope="col">{t("perf_usd_per_million_tokens")}</th>
                                    </tr>
                                </thead>
                                <tbody>{rows}</tbody>
                            </table>
                        </div>
                        <PerfNotes notes=tb.notes testid=format!("tp-notes-{}", tb.key) />
                    }
                }).collect_view()}
        </div>
    }
}
