//! Where an axis puts its ticks: round values on a linear axis, whole
//! decades on a log one.

/// The ticks of a log axis covering `min..=max` (both positive), and the
/// axis's bounds: whole decades.
pub(super) fn log_ticks(min: f64, max: f64) -> (Vec<f64>, f64, f64) {
    let low = 10f64.powf(min.log10().floor());
    let mut high = 10f64.powf(max.log10().ceil());
    if high <= low {
        high = low * 10.0;
    }
    let decades = (high / low).log10().round() as i32;
    let steps: &[f64] = if decades > 3 {
        &[1.0]
    } else {
        &[1.0, 2.0, 5.0]
    };
    let mut ticks = Vec::new();
    for d in 0..=decades {
        let decade = low * 10f64.powi(d);
        for step in steps {
            let tick = decade * step;
            if tick <= high * 1.000_001 {
                // 0.1 x 3 is 0.30000000000000004: keep the digits a label shows
                ticks.push(format!("{tick:.6e}").parse().unwrap_or(tick));
            }
        }
    }
    (ticks, low, high)
}

/// Round tick values (1, 2 or 5 times a power of ten) covering min..=max.
pub(super) fn nice_ticks(min: f64, max: f64, count: usize) -> Vec<f64> {
    let range = (max - min).max(f64::MIN_POSITIVE);
    let raw = range / count.max(1) as f64;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * power);
    let first = (min / step).floor() * step;
    let mut ticks = Vec::new();
    let mut t = first;
    while t < max + step * 0.999 && ticks.len() < 50 {
        ticks.push((t / step).round() * step);
        t += step;
    }
    ticks
}
