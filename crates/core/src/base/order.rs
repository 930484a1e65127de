//! One sort for the whole crate.
//!
//! Every `sort`, `sort_by` or `sort_by_key` with its own element type or closure compiles a
//! complete copy of the standard library's sort (1–5 KB of wasm each; the app had eleven).
//! Core and charts sort through [`sort_by`] instead: it sorts an index permutation with
//! [`order_by`], whose comparator is a `dyn Fn`, so the shipped wasm holds one copy of the sort.
//! The results are those of the standard stable sort (items that compare equal keep their
//! order); the tests compare the two.

use std::cmp::Ordering;

/// The permutation a stable sort of `n` items by `cmp` (called with two indices) gives: the
/// indices `0..n` in ascending `cmp` order, equal items in index order. `cmp` must be a total
/// order (use `f64::total_cmp` for floats).
pub fn order_by(n: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    // Ties broken by index: the order is total, so the unstable sort gives the stable result.
    idx.sort_unstable_by(|a, b| cmp(*a, *b).then(a.cmp(b)));
    idx
}

/// Sorts `v` by `cmp`, stably: the same result as `v.sort_by(cmp)`, through the one sort of
/// [`order_by`].
pub fn sort_by<T>(v: &mut [T], cmp: &dyn Fn(&T, &T) -> Ordering) {
    let order = {
        let items: &[T] = v;
        order_by(items.len(), &|a, b| match (items.get(a), items.get(b)) {
            (Some(x), Some(y)) => cmp(x, y),
            _ => Ordering::Equal,
        })
    };
    // Apply the permutation in place: position i takes the item that started at order[i];
    // an index below i has already been swapped away, so follow where it went.
    for i in 0..order.len() {
        let mut j = order.get(i).copied().unwrap_or(i);
        while j < i {
            j = order.get(j).copied().unwrap_or(i);
        }
        v.swap(i, j);
    }
}

/// Sorts integers ascending and removes duplicates (`sort_unstable` + `dedup`).
pub fn sort_dedup(v: &mut Vec<u64>) {
    sort_by(v, &|a, b| a.cmp(b));
    v.dedup();
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The standard stable sort, the reference every call site used before.
    fn std_sorted<T: Clone>(v: &[T], cmp: &dyn Fn(&T, &T) -> Ordering) -> Vec<T> {
        let mut w = v.to_vec();
        w.sort_by(|a, b| cmp(a, b));
        w
    }

    #[test]
    fn ties_keep_their_input_order() {
        // Keys with many ties; the payload records the input position.
        let v: Vec<(u8, usize)> = [3u8, 1, 3, 0, 1, 3, 0, 2]
            .iter()
            .enumerate()
            .map(|(i, k)| (*k, i))
            .collect();
        let mut w = v.clone();
        sort_by(&mut w, &|a, b| a.0.cmp(&b.0));
        assert_eq!(w, std_sorted(&v, &|a, b| a.0.cmp(&b.0)));
        // Within each key the positions ascend.
        assert!(w.windows(2).all(|p| p[0].0 < p[1].0 || p[0].1 < p[1].1));
    }

    #[test]
    fn floats_order_like_total_cmp() {
        let v = vec![
            2.5,
            -0.0,
            f64::NAN,
            0.0,
            -1.0,
            f64::INFINITY,
            2.5,
            f64::NEG_INFINITY,
        ];
        let mut w = v.clone();
        sort_by(&mut w, &|a: &f64, b| a.total_cmp(b));
        let want = std_sorted(&v, &|a: &f64, b| a.total_cmp(b));
        let bits = |x: &[f64]| x.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&w), bits(&want));
    }

    #[test]
    fn sort_dedup_matches_sort_unstable_then_dedup() {
        let v = vec![5u64, 1, 5, 3, 0, 3, u64::MAX, 1];
        let mut w = v.clone();
        sort_dedup(&mut w);
        let mut want = v;
        want.sort_unstable();
        want.dedup();
        assert_eq!(w, want);
        let mut empty: Vec<u64> = Vec::new();
        sort_dedup(&mut empty);
        assert!(empty.is_empty());
    }

    proptest! {
        #[test]
        fn same_as_the_std_stable_sort(keys in proptest::collection::vec(0u8..6, 0..80)) {
            let v: Vec<(u8, usize)> = keys.into_iter().enumerate().map(|(i, k)| (k, i)).collect();
            let mut w = v.clone();
            sort_by(&mut w, &|a, b| b.0.cmp(&a.0));
            prop_assert_eq!(w, std_sorted(&v, &|a, b| b.0.cmp(&a.0)));
        }

        #[test]
        fn order_is_a_permutation(keys in proptest::collection::vec(-3i32..3, 0..60)) {
            let order = order_by(keys.len(), &|a, b| keys[a].cmp(&keys[b]));
            let mut seen = order.clone();
            seen.sort_unstable();
            prop_assert_eq!(seen, (0..keys.len()).collect::<Vec<_>>());
        }
    }
}
