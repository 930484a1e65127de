//! `ChartTable`: the chart's data as a table inside a `<details>`, the accessible alternative
//! to the canvas.

use super::any_chart::AnyChart;
use crate::charts::Labels;
use crate::core::base::{tr, Lang};
use leptos::prelude::*;

/// The chart's data as a table inside a `<details>`, built only while it is open.
#[component]
pub(super) fn ChartTable(
    /// The chart.
    data: Memo<AnyChart>,
    /// The UI language.
    lang: Signal<Lang>,
    /// Accessible name of the chart, already translated (the table's caption).
    title: Signal<String>,
) -> impl IntoView {
    // The data table is built only while its <details> is open.
    let table_open = RwSignal::new(false);
    // A memo: the header and the rows read it, and it is built once per change.
    let table = Memo::new(move |_| {
        if table_open.get() {
            data.with(|d| d.0.table(&Labels::new(lang.get())))
        } else {
            Default::default()
        }
    });
    let t = move |key: &'static str| move || tr(lang.get(), key);
    view! {
        <details
            class="chart-table"
            on:toggle=move |ev| {
                table_open.set(crate::ui::view_common::details_opened(&ev));
            }
        >
            <summary>{t("chart_data_table")}</summary>
            <table>
                <caption>{move || title.get()}</caption>
                <thead>
                    <tr>
                        {move || {
                            table.with(|t| {
                                t.headers
                                    .iter()
                                    .map(|h| view! { <th scope="col">{h.clone()}</th> })
                                    .collect_view()
                            })
                        }}
                    </tr>
                </thead>
                <tbody>
                    {move || {
                        table
                            .with(|t| t.rows.clone())
                            .into_iter()
                            .map(|row| {
                                view! {
                                    <tr>
                                        {row
                                            .into_iter()
                                            .enumerate()
                                            .map(|(j, cell)| {
                                                if j == 0 {
                                                    view! { <th scope="row">{cell}</th> }.into_any()
                                                } else {
                                                    view! { <td>{cell}</td> }.into_any()
                                                }
                                            })
                                            .collect_view()}
                                    </tr>
                                }
                            })
                            .collect_view()
                    }}
                </tbody>
            </table>
        </details>
    }
}
