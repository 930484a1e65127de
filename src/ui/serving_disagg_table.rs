//! "Serving under load" with disaggregated prefill and decode: the two pools at the chosen
//! rate, one column per GPU (`core::present::disagg_table`: each pool's workers × GPUs and
//! busy share, the decode pool's mean batch, the KV sent per request per GPU and its link, and
//! TTFT's three stages, mean / P99). Nothing is drawn when the run was not disaggregated.

use crate::core::present::disagg_table;
use crate::ui::sim_client::SimSignals;
use crate::ui::state::use_app;
use leptos::prelude::*;

/// The pools' table of the newest result.
#[component]
pub fn DisaggTable(
    /// The worker's replies.
    sig: SimSignals,
    /// Rebuilds the table once after the mount (`ui::sim_status::rebuild_once`).
    warm: Trigger,
) -> impl IntoView {
    let state = use_app();
    let table = move || {
        warm.track();
        let lang = state.lang.get();
        sig.view.with(|v| {
            let cols = v.as_ref().map(|v| v.disagg_columns()).unwrap_or_default();
            (!cols.is_empty()).then(|| disagg_table(&cols, lang))
        })
    };
    move || {
        table().map(|(head, rows)| {
            view! {
                <div class="table-scroll" tabindex="0">
                    <table class="serving-stats serving-disagg" data-testid="serving-disagg">
                        <caption>{move || state.tr("sv_pd_title")}</caption>
                        <thead><tr>{head.into_iter().map(|h| view! { <th scope="col">{h}</th> }).collect_view()}</tr></thead>
                        <tbody>
                            {rows.into_iter().map(|r| {
                                let mut cells = r.into_iter();
                                let name = cells.next().unwrap_or_default();
                                view! {
                                    <tr>
                                        <th scope="row">{name}</th>
                                        {cells.map(|c| view! { <td class="num">{c}</td> }).collect_view()}
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
            }
        })
    }
}
