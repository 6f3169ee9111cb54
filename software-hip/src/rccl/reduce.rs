//! Element-wise reductions over raw byte buffers for every NCCL data type.

use super::types::*;

/// How ranks' values combine. `PreMulSum` scales each rank's input by its own factor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reduction {
    Sum,
    Prod,
    Max,
    Min,
    Avg,
    PreMulSum,
}

pub(crate) fn f16_to_f32(bits: u16) -> f32 {
    let sign = ((bits >> 15) as u32) << 31;
    let exponent = ((bits >> 10) & 0x1f) as u32;
    let mantissa = (bits & 0x3ff) as u32;
    let value = match (exponent, mantissa) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: normalize.
            let mut e = 127 - 15 + 1;
            let mut m = mantissa;
            while m & 0x400 == 0 {
                m <<= 1;
                e -= 1;
            }
            sign | (e << 23) | ((m & 0x3ff) << 13)
        }
        (0x1f, _) => sign | 0x7f80_0000 | (mantissa << 13),
        _ => sign | ((exponent + 127 - 15) << 23) | (mantissa << 13),
    };
    f32::from_bits(value)
}

fn f32_to_f16(value: f32) -> u16 {
    let bits = value.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exponent = ((bits >> 23) & 0xff) as i32;
    let mantissa = bits & 0x7f_ffff;
    if exponent == 0xff {
        return sign | 0x7c00 | if mantissa != 0 { 0x200 } else { 0 };
    }
    let half_exponent = exponent - 127 + 15;
    if half_exponent >= 0x1f {
        return sign | 0x7c00;
    }
    if half_exponent <= 0 {
        if half_exponent < -10 {
            return sign;
        }
        let m = (mantissa | 0x80_0000) >> (1 - half_exponent);
        // Round to nearest even.
        let rounded = (m + 0xfff + ((m >> 13) & 1)) >> 13;
        return sign | rounded as u16;
    }
    let rounded = mantissa + 0xfff + ((mantissa >> 13) & 1);
    let (half_exponent, rounded) =
        if rounded & 0x80_0000 != 0 { (half_exponent + 1, 0) } else { (half_exponent, rounded >> 13) };
    if half_exponent >= 0x1f {
        return sign | 0x7c00;
    }
    sign | ((half_exponent as u16) << 10) | rounded as u16
}

pub(crate) fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits((bits as u32) << 16)
}

fn f32_to_bf16(value: f32) -> u16 {
    let bits = value.to_bits();
    if value.is_nan() {
        return ((bits >> 16) | 0x40) as u16;
    }
    ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) as u16
}

/// Combines `inputs` (one byte slice per rank, `count` elements each) into `output`.
/// `factors[r]` scales rank r's input for PreMulSum.
pub fn reduce(
    data_type: ncclDataType_t,
    reduction: Reduction,
    inputs: &[&[u8]],
    factors: &[f64],
    output: &mut [u8],
) -> Result<(), ncclResult_t> {
    let ranks = inputs.len() as f64;
    macro_rules! combine {
        ($t:ty, $to:expr, $from:expr) => {{
            const SIZE: usize = std::mem::size_of::<$t>();
            let read = |bytes: &[u8], i: usize| -> f64 {
                let raw = <$t>::from_le_bytes(bytes[i * SIZE..(i + 1) * SIZE].try_into().expect("element"));
                $to(raw)
            };
            for i in 0..output.len() / SIZE {
                let mut acc = match reduction {
                    Reduction::PreMulSum => read(inputs[0], i) * factors[0],
                    _ => read(inputs[0], i),
                };
                for (rank, input) in inputs.iter().enumerate().skip(1) {
                    let value = read(input, i);
                    acc = match reduction {
                        Reduction::Sum | Reduction::Avg => acc + value,
                        Reduction::PreMulSum => acc + value * factors[rank],
                        Reduction::Prod => acc * value,
                        Reduction::Max => acc.max(value),
                        Reduction::Min => acc.min(value),
                    };
                }
                if reduction == Reduction::Avg {
                    acc /= ranks;
                }
                let raw: $t = $from(acc);
                output[i * SIZE..(i + 1) * SIZE].copy_from_slice(&raw.to_le_bytes());
            }
        }};
    }
    // Integers go through i128 so sums and products wrap like the native types.
    macro_rules! combine_int {
        ($t:ty) => {{
            const SIZE: usize = std::mem::size_of::<$t>();
            let read = |bytes: &[u8], i: usize| -> $t {
                <$t>::from_le_bytes(bytes[i * SIZE..(i + 1) * SIZE].try_into().expect("element"))
            };
            for i in 0..output.len() / SIZE {
                let scaled = |rank: usize| -> $t {
                    let value = read(inputs[rank], i);
                    match reduction {
                        Reduction::PreMulSum => (value as f64 * factors[rank]) as $t,
                        _ => value,
                    }
                };
                let mut acc = scaled(0);
                for rank in 1..inputs.len() {
                    let value = scaled(rank);
                    acc = match reduction {
                        Reduction::Sum | Reduction::Avg | Reduction::PreMulSum => acc.wrapping_add(value),
                        Reduction::Prod => acc.wrapping_mul(value),
                        Reduction::Max => acc.max(value),
                        Reduction::Min => acc.min(value),
                    };
                }
                if reduction == Reduction::Avg {
                    acc = (acc as i128 / inputs.len() as i128) as $t;
                }
                output[i * SIZE..(i + 1) * SIZE].copy_from_slice(&acc.to_le_bytes());
            }
        }};
    }
    match data_type {
        ncclInt8 => combine_int!(i8),
        ncclUint8 => combine_int!(u8),
        ncclInt32 => combine_int!(i32),
        ncclUint32 => combine_int!(u32),
        ncclInt64 => combine_int!(i64),
        ncclUint64 => combine_int!(u64),
        ncclFloat16 => combine!(u16, |b| f16_to_f32(b) as f64, |v: f64| f32_to_f16(v as f32)),
        ncclBfloat16 => combine!(u16, |b| bf16_to_f32(b) as f64, |v: f64| f32_to_bf16(v as f32)),
        ncclFloat32 => combine!(f32, |v: f32| v as f64, |v: f64| v as f32),
        ncclFloat64 => combine!(f64, |v: f64| v, |v: f64| v),
        _ => return Err(ncclInvalidArgument),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_round_trips() {
        for value in [0.0f32, 1.0, -2.5, 65504.0, 0.000061035156, 3.140625] {
            assert_eq!(f16_to_f32(f32_to_f16(value)), value, "{value}");
        }
        assert_eq!(f32_to_f16(1.0), 0x3c00);
        assert_eq!(f32_to_f16(1e6), 0x7c00, "overflow becomes infinity");
        assert_eq!(bf16_to_f32(f32_to_bf16(-3.5)), -3.5);
    }

    #[test]
    fn reduces_each_type() {
        let a = 3i32.to_le_bytes();
        let b = (-5i32).to_le_bytes();
        let mut out = [0u8; 4];
        reduce(ncclInt32, Reduction::Sum, &[&a, &b], &[1.0, 1.0], &mut out).unwrap();
        assert_eq!(i32::from_le_bytes(out), -2);
        reduce(ncclInt32, Reduction::Max, &[&a, &b], &[1.0, 1.0], &mut out).unwrap();
        assert_eq!(i32::from_le_bytes(out), 3);
        let x = f32_to_f16(1.5).to_le_bytes();
        let y = f32_to_f16(2.0).to_le_bytes();
        let mut half = [0u8; 2];
        reduce(ncclFloat16, Reduction::Avg, &[&x, &y], &[1.0, 1.0], &mut half).unwrap();
        assert_eq!(f16_to_f32(u16::from_le_bytes(half)), 1.75);
        let p = 2.0f64.to_le_bytes();
        let q = 4.0f64.to_le_bytes();
        let mut double = [0u8; 8];
        reduce(ncclFloat64, Reduction::PreMulSum, &[&p, &q], &[0.5, 0.25], &mut double).unwrap();
        assert_eq!(f64::from_le_bytes(double), 2.0);
        assert_eq!(reduce(42, Reduction::Sum, &[&a], &[1.0], &mut out), Err(ncclInvalidArgument));
    }
}
