//! The exact sign test of paired rounds: how likely k of n rounds fall on
//! one side when neither side is better.

/// P(X >= k) for X ~ Binomial(n, 1/2): the exact one-sided sign-test p of
/// k rounds of n on one side. 1 for n = 0.
pub fn sign_test_p(k: usize, n: usize) -> f64 {
    if n == 0 {
        return 1.0;
    }
    let total = 2f64.powi(n as i32);
    let mut at_least = 0.0; // P(X >= k) * 2^n
    let mut choose = 1.0; // C(n, i), from i = n down
    for i in (0..=n).rev() {
        if i < k {
            break;
        }
        at_least += choose;
        choose = choose * i as f64 / (n - i + 1) as f64;
    }
    at_least / total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sign_test_p_is_the_binomial_tail() {
        assert_eq!(sign_test_p(3, 3), 0.125);
        assert_eq!(sign_test_p(5, 5), 0.03125);
        assert_eq!(sign_test_p(4, 5), 0.1875);
        assert_eq!(sign_test_p(9, 10), 0.0107421875);
        assert_eq!(sign_test_p(0, 4), 1.0);
        assert_eq!(sign_test_p(1, 1), 0.5);
        assert_eq!(sign_test_p(0, 0), 1.0);
    }
}
