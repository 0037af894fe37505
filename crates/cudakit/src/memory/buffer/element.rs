//! The plain-data element trait: what may live in a CUDA buffer and be
//! passed to a kernel by value.

/// Plain data that can be copied byte for byte between host and device.
///
/// # Safety
///
/// Implement it only for types that are
/// - `Copy` and without references, pointers to host memory or drop glue
///   (the bytes are copied to the device and back, never dropped there);
/// - valid for **every** bit pattern: whatever a kernel writes, or what an
///   unwritten allocation holds, becomes a value of the type on the host.
///   `bool`, `char`, enums and `NonZero*` are therefore excluded;
/// - laid out as the kernel expects: `#[repr(C)]` (or `#[repr(transparent)]`)
///   for structs, with the same field order, sizes and alignment as the
///   CUDA C++ side.
///
/// - without implicit padding: every byte of the value is read as a byte
///   (to copy it and to show it in the launch audit), and reading padding
///   is undefined behaviour in Rust. Declare padding as explicit fields
///   (`_pad: [u8; 7]`) so the layout still matches the C side.
///
/// [`device_struct!`](crate::device_struct) declares a struct and implements
/// the trait with these rules checked at compile time, no `unsafe` needed.
///
/// [`DeviceCopy::ELEMENT_TYPE`] says which C type the Rust type stands for,
/// so that a launch can check it against the kernel's parameter types. It
/// defaults to [`ElementType::Unknown`] (only the size is checked); the
/// numbers, [`F16`], [`Bf16`], arrays of them and `device_struct!` types
/// state theirs.
pub unsafe trait DeviceCopy: Copy + Send + Sync + 'static {
    /// The C type this Rust type stands for in a kernel's parameter list.
    const ELEMENT_TYPE: ElementType = ElementType::Unknown;
}

/// A builtin C type as a Rust number stands for it; some stand for more
/// than one C spelling (`i64` for `long` and `long long`, both 8 bytes on
/// CUDA's 64-bit Linux).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Scalar {
    /// `i8`: `signed char`, or `char` (signed on CUDA's platforms).
    I8,
    /// `u8`: `unsigned char` (and `bool`, which Rust cannot pass as plain
    /// data: pass `0u8` or `1u8`).
    U8,
    /// `i16`: `short`.
    I16,
    /// `u16`: `unsigned short`.
    U16,
    /// `i32`: `int`.
    I32,
    /// `u32`: `unsigned int`.
    U32,
    /// `i64`, `isize`: `long` or `long long`.
    I64,
    /// `u64`, `usize`: `unsigned long` or `unsigned long long`.
    U64,
    /// `i128`: `__int128`.
    I128,
    /// `u128`: `unsigned __int128`.
    U128,
    /// `f32`: `float`.
    F32,
    /// `f64`: `double`.
    F64,
    /// [`F16`]: `__half`.
    F16,
    /// [`Bf16`]: `__nv_bfloat16`.
    Bf16,
    /// [`F8E4M3`]: `__nv_fp8_e4m3`.
    F8E4M3,
    /// [`F8E5M2`]: `__nv_fp8_e5m2`.
    F8E5M2,
}

impl Scalar {
    /// The Rust spelling (`f32`, `F16`).
    pub fn rust_name(self) -> &'static str {
        match self {
            Scalar::I8 => "i8",
            Scalar::U8 => "u8",
            Scalar::I16 => "i16",
            Scalar::U16 => "u16",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::I64 => "i64",
            Scalar::U64 => "u64",
            Scalar::I128 => "i128",
            Scalar::U128 => "u128",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::F16 => "F16",
            Scalar::Bf16 => "Bf16",
            Scalar::F8E4M3 => "F8E4M3",
            Scalar::F8E5M2 => "F8E5M2",
        }
    }
}

/// A struct's C name, as [`device_struct!`](crate::device_struct) declares
/// it, with a hash of the name computed at compile time: a launch compares
/// the hashes, not the text.
#[derive(Debug, Clone, Copy)]
pub struct StructName {
    name: &'static str,
    hash: u64,
}

impl StructName {
    /// The name `name` (`"Params"`, `"app::Params"`), hashed.
    pub const fn new(name: &'static str) -> StructName {
        StructName {
            name,
            hash: name_hash(name),
        }
    }

    /// The name as declared.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The name's hash (FNV-1a, 64 bits), as [`name_hash`] computes it.
    pub fn hash(&self) -> u64 {
        self.hash
    }
}

impl PartialEq for StructName {
    fn eq(&self, other: &StructName) -> bool {
        self.hash == other.hash && self.name == other.name
    }
}
impl Eq for StructName {}

/// FNV-1a over the bytes of `text`: how struct names are compared at launch.
pub const fn name_hash(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    hash
}

/// The C type a [`DeviceCopy`] type stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ElementType {
    /// Not stated: only its size is checked against a kernel's parameter.
    Unknown,
    /// A builtin number.
    Scalar(Scalar),
    /// `[T; len]` of a number: passed by value it fits a CUDA vector type
    /// of that element and lane count (`[f32; 4]` for `float4`).
    Array {
        /// The element.
        element: Scalar,
        /// The number of elements.
        len: usize,
    },
    /// A struct by its C name (`device_struct!`).
    Struct(&'static StructName),
}

impl ElementType {
    /// The Rust spelling, where it is known here (`f32`, `[f32; 4]`, the
    /// struct's C name); `None` for [`ElementType::Unknown`].
    pub fn rust_name(&self) -> Option<String> {
        match self {
            ElementType::Unknown => None,
            ElementType::Scalar(s) => Some(s.rust_name().to_owned()),
            ElementType::Array { element, len } => {
                Some(format!("[{}; {len}]", element.rust_name()))
            }
            ElementType::Struct(name) => Some(name.name().to_owned()),
        }
    }
}

/// Declares a `#[repr(C)]` plain-data struct and implements [`DeviceCopy`]
/// for it, checking at compile time that every field is `DeviceCopy` and
/// that the struct has no implicit padding (its size is the sum of its
/// fields' sizes). Other attributes and derives pass through; `Clone` and
/// `Copy` are derived.
///
/// ```
/// cudakit::device_struct! {
///     /// A particle as the kernel sees it.
///     #[derive(Debug, PartialEq)]
///     pub struct Particle {
///         pub id: u8,
///         pub _pad: [u8; 3], // explicit, as on the C side
///         pub pos: [f32; 3],
///         pub mass: f64,
///     }
/// }
/// let p = Particle { id: 1, _pad: [0; 3], pos: [0.0; 3], mass: 2.0 };
/// let list = cudakit::params![p];
/// assert_eq!(list.describe()[0].size, 24);
/// ```
///
/// The struct stands for the C type of the same name: a launch refuses it
/// for a kernel parameter of another struct type, even one of the same size
/// (see [`DeviceCopy::ELEMENT_TYPE`]). Where the C name differs, or lives in
/// a namespace, give it after `as`, spelled as cudakit prints C types
/// (`"app::Params"`, `"Vec<float, 3>"`, or a CUDA vector type such as
/// `"float4"`):
///
/// ```
/// cudakit::device_struct! {
///     #[repr(align(16))]
///     pub struct Float4 as "float4" { pub v: [f32; 4] }
/// }
/// use cudakit::DeviceCopy;
/// assert!(matches!(
///     Float4::ELEMENT_TYPE,
///     cudakit::memory::ElementType::Struct(n) if n.name() == "float4"
/// ));
/// ```
///
/// Implicit padding is a compile error:
///
/// ```compile_fail,E0080
/// cudakit::device_struct! {
///     struct Padded { a: u8, b: f64 } // 7 bytes of padding after `a`
/// }
/// ```
#[macro_export]
macro_rules! device_struct {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $( $(#[$fmeta:meta])* $fvis:vis $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $crate::device_struct! {
            $(#[$meta])*
            $vis struct $name as (stringify!($name)) {
                $( $(#[$fmeta])* $fvis $field : $ty ),*
            }
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident as $cname:tt {
            $( $(#[$fmeta:meta])* $fvis:vis $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy)]
        $vis struct $name {
            $( $(#[$fmeta])* $fvis $field : $ty ),*
        }
        const _: () = {
            const fn is_device_copy<T: $crate::DeviceCopy>() {}
            $( is_device_copy::<$ty>(); )*
            assert!(
                ::core::mem::size_of::<$name>() == 0 $( + ::core::mem::size_of::<$ty>() )*,
                concat!(
                    stringify!($name),
                    " has implicit padding: declare it as explicit fields (`_pad: [u8; N]`)"
                )
            );
        };
        // SAFETY: repr(C); every field is DeviceCopy (checked above), so
        // Copy, without host pointers, and valid for every bit pattern; the
        // size equals the sum of the fields' sizes (checked above), so no
        // byte is padding.
        unsafe impl $crate::DeviceCopy for $name {
            const ELEMENT_TYPE: $crate::memory::ElementType = {
                const NAME: $crate::memory::StructName = $crate::memory::StructName::new($cname);
                $crate::memory::ElementType::Struct(&NAME)
            };
        }
    };
}

macro_rules! impl_device_copy {
    ($($t:ty => $s:ident),*) => { $(
        // SAFETY: a primitive number: Copy, no pointers, every bit pattern valid.
        unsafe impl DeviceCopy for $t {
            const ELEMENT_TYPE: ElementType = ElementType::Scalar(Scalar::$s);
        }
    )* };
}
impl_device_copy!(
    u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, u64 => U64,
    i64 => I64, u128 => U128, i128 => I128, usize => U64, isize => I64, f32 => F32, f64 => F64
);

// SAFETY: an array of plain data is plain data, with the element's layout.
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {
    const ELEMENT_TYPE: ElementType = match T::ELEMENT_TYPE {
        ElementType::Scalar(element) => ElementType::Array { element, len: N },
        _ => ElementType::Unknown,
    };
}

/// IEEE 754 half precision (`__half`), kept as its bits.
#[repr(transparent)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct F16(pub u16);

/// bfloat16 (`__nv_bfloat16`), kept as its bits.
#[repr(transparent)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Bf16(pub u16);

// SAFETY: a transparent u16.
unsafe impl DeviceCopy for F16 {
    const ELEMENT_TYPE: ElementType = ElementType::Scalar(Scalar::F16);
}
// SAFETY: a transparent u16.
unsafe impl DeviceCopy for Bf16 {
    const ELEMENT_TYPE: ElementType = ElementType::Scalar(Scalar::Bf16);
}

impl F16 {
    /// Rounds an f32 to the nearest half (ties to even); overflow becomes
    /// infinity, NaN stays NaN.
    pub fn from_f32(x: f32) -> F16 {
        let bits = x.to_bits();
        let sign = ((bits >> 16) & 0x8000) as u16;
        let exp = ((bits >> 23) & 0xff) as i32;
        let mant = bits & 0x7f_ffff;
        if exp == 0xff {
            let nan = if mant != 0 { 0x200 } else { 0 };
            return F16(sign | 0x7c00 | nan);
        }
        let e = exp - 127 + 15;
        if e >= 0x1f {
            return F16(sign | 0x7c00);
        }
        if e <= 0 {
            if e < -10 {
                return F16(sign);
            }
            let m = mant | 0x80_0000;
            let shift = (14 - e) as u32;
            let half = 1u32 << (shift - 1);
            let rest = m & ((1u32 << shift) - 1);
            let mut v = m >> shift;
            if rest > half || (rest == half && (v & 1) == 1) {
                v += 1;
            }
            return F16(sign | v as u16);
        }
        let mut v = ((e as u32) << 10) | (mant >> 13);
        let rest = mant & 0x1fff;
        if rest > 0x1000 || (rest == 0x1000 && (v & 1) == 1) {
            v += 1;
        }
        F16(sign | v as u16)
    }

    /// The exact f32 value.
    pub fn to_f32(self) -> f32 {
        let h = self.0 as u32;
        let sign = (h & 0x8000) << 16;
        let exp = (h >> 10) & 0x1f;
        let mant = h & 0x3ff;
        let bits = if exp == 0 {
            if mant == 0 {
                sign
            } else {
                let mut e = 127 - 15 + 1;
                let mut m = mant;
                while m & 0x400 == 0 {
                    m <<= 1;
                    e -= 1;
                }
                sign | ((e as u32) << 23) | ((m & 0x3ff) << 13)
            }
        } else if exp == 0x1f {
            sign | 0x7f80_0000 | (mant << 13)
        } else {
            sign | ((exp + 127 - 15) << 23) | (mant << 13)
        };
        f32::from_bits(bits)
    }
}

impl Bf16 {
    /// Rounds an f32 to the nearest bfloat16 (ties to even); NaN stays NaN.
    pub fn from_f32(x: f32) -> Bf16 {
        let bits = x.to_bits();
        if x.is_nan() {
            return Bf16(((bits >> 16) as u16) | 0x40);
        }
        let round = 0x7fff + ((bits >> 16) & 1);
        Bf16((bits.wrapping_add(round) >> 16) as u16)
    }

    /// The exact f32 value.
    pub fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}

/// OCP FP8 E4M3 (`__nv_fp8_e4m3`), kept as its bits: 1 sign, 4 exponent
/// (bias 7) and 3 mantissa bits; no infinities, NaN is S.1111.111, the
/// largest finite value 448, the smallest subnormal 2^-9.
#[repr(transparent)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct F8E4M3(pub u8);

/// OCP FP8 E5M2 (`__nv_fp8_e5m2`), kept as its bits: 1 sign, 5 exponent
/// (bias 15) and 2 mantissa bits, IEEE-like: S.11111.00 is infinity,
/// S.11111.{01,10,11} NaN, the largest finite value 57344, the smallest
/// subnormal 2^-16.
#[repr(transparent)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct F8E5M2(pub u8);

// SAFETY: a transparent u8, every bit pattern a valid value. Its C type
// is `__nv_fp8_e4m3`; a kernel may also take it as `unsigned char` bits
// (the signature check accepts both, as `__half` and `unsigned short` for
// F16), never as the other FP8 format.
unsafe impl DeviceCopy for F8E4M3 {
    const ELEMENT_TYPE: ElementType = ElementType::Scalar(Scalar::F8E4M3);
}
// SAFETY: as for F8E4M3; C type `__nv_fp8_e5m2`.
unsafe impl DeviceCopy for F8E5M2 {
    const ELEMENT_TYPE: ElementType = ElementType::Scalar(Scalar::F8E5M2);
}

/// Rounds a finite, non-negative `a` to nearest even in a format with
/// `mbits` mantissa bits and minimum normal exponent `emin`, and returns
/// the unsigned code (`(biased exponent << mbits) | mantissa`, subnormals
/// with exponent field 0), unbounded above: the caller saturates.
fn fp8_code(a: f32, mbits: u32, emin: i32) -> u32 {
    if a == 0.0 {
        return 0;
    }
    let wide = f64::from(a); // exact, and normal even for f32 subnormals
    let e = ((wide.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let top = e.max(emin);
    // a / 2^(top - mbits): exact in f64 (a power-of-two scaling in range).
    let y = wide * 2f64.powi(mbits as i32 - top);
    let floor = y.floor();
    let frac = y - floor;
    let mut n = floor as u32;
    if frac > 0.5 || (frac == 0.5 && n % 2 == 1) {
        n += 1;
    }
    if e < emin {
        // Subnormal (n = 2^mbits, rounded up into the first binade, is the
        // code of the smallest normal).
        n
    } else {
        // n in [2^mbits, 2^(mbits+1)]; the upper end carries into the next
        // exponent, which the addition does by itself.
        (((top - emin + 1) as u32) << mbits) + (n - (1 << mbits))
    }
}

impl F8E4M3 {
    /// The largest finite value, 448.
    pub const MAX: F8E4M3 = F8E4M3(0x7e);
    /// The NaN CUDA's conversions produce (positive sign).
    pub const NAN: F8E4M3 = F8E4M3(0x7f);

    /// Rounds an f32 to the nearest e4m3 value, ties to even, saturating:
    /// what `__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3)` and PTX
    /// `cvt.rn.satfinite.e4m3x2.f32` compute. Finite values beyond 464
    /// (448 plus half an ulp) and infinities become ±448; a tie at 464 goes
    /// to 448 (even); values at or below 2^-10 (half the smallest
    /// subnormal) become ±0; NaN becomes S.1111.111 with x's sign, as
    /// `cuda_fp8.hpp`'s host path gives it.
    pub fn from_f32(x: f32) -> F8E4M3 {
        let sign = ((x.to_bits() >> 24) & 0x80) as u8;
        if x.is_nan() {
            return F8E4M3(sign | 0x7f);
        }
        let code = fp8_code(x.abs().min(f32::MAX), 3, -6).min(0x7e);
        F8E4M3(sign | code as u8)
    }

    /// The exact f32 value (NaN for S.1111.111).
    pub fn to_f32(self) -> f32 {
        let sign = if self.0 & 0x80 != 0 { -1.0f32 } else { 1.0 };
        let exp = i32::from((self.0 >> 3) & 0xf);
        let mant = f32::from(self.0 & 0x7);
        if exp == 0xf && self.0 & 0x7 == 0x7 {
            return f32::NAN.copysign(sign);
        }
        let magnitude = if exp == 0 {
            mant * 2f32.powi(-9)
        } else {
            (8.0 + mant) * 2f32.powi(exp - 7 - 3)
        };
        sign * magnitude
    }

    /// Whether it is the NaN (S.1111.111).
    pub fn is_nan(self) -> bool {
        self.0 & 0x7f == 0x7f
    }
}

impl F8E5M2 {
    /// The largest finite value, 57344.
    pub const MAX: F8E5M2 = F8E5M2(0x7b);
    /// Positive infinity.
    pub const INFINITY: F8E5M2 = F8E5M2(0x7c);

    /// Rounds an f32 to the nearest e5m2 value, ties to even, saturating:
    /// what `__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2)` and PTX
    /// `cvt.rn.satfinite.e5m2x2.f32` compute. Finite values beyond 61440
    /// (57344 plus half an ulp) and infinities become ±57344 (never
    /// infinity); a tie at 61440 goes to 57344 (even); values at or below
    /// 2^-17 become ±0; NaN becomes a quiet NaN with x's sign, S.11111.1m
    /// with m the second mantissa bit of the quieted NaN (so 0x7e for
    /// `f32::NAN`), as `cuda_fp8.hpp`'s host path gives it.
    pub fn from_f32(x: f32) -> F8E5M2 {
        let bits = x.to_bits();
        let sign = ((bits >> 24) & 0x80) as u8;
        if x.is_nan() {
            return F8E5M2(sign | 0x7e | ((bits >> 21) & 1) as u8);
        }
        let code = fp8_code(x.abs().min(f32::MAX), 2, -14).min(0x7b);
        F8E5M2(sign | code as u8)
    }

    /// The exact f32 value (±infinity for S.11111.00, NaN for the other
    /// S.11111.xx).
    pub fn to_f32(self) -> f32 {
        let sign = if self.0 & 0x80 != 0 { -1.0f32 } else { 1.0 };
        let exp = i32::from((self.0 >> 2) & 0x1f);
        let mant = f32::from(self.0 & 0x3);
        let magnitude = match exp {
            0x1f if self.0 & 0x3 == 0 => f32::INFINITY,
            0x1f => f32::NAN,
            0 => mant * 2f32.powi(-16),
            _ => (4.0 + mant) * 2f32.powi(exp - 15 - 2),
        };
        if magnitude.is_nan() {
            return magnitude.copysign(sign);
        }
        sign * magnitude
    }

    /// Whether it is a NaN (S.11111.xx, xx ≠ 00).
    pub fn is_nan(self) -> bool {
        self.0 & 0x7f > 0x7c
    }
}

impl std::fmt::Debug for F8E4M3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}e4m3", self.to_f32())
    }
}

impl std::fmt::Debug for F8E5M2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}e5m2", self.to_f32())
    }
}

impl std::fmt::Debug for F16 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}f16", self.to_f32())
    }
}

impl std::fmt::Debug for Bf16 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}bf16", self.to_f32())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_round_trips_every_finite_half() {
        for bits in 0..=u16::MAX {
            let h = F16(bits);
            let x = h.to_f32();
            if x.is_nan() {
                assert!(F16::from_f32(x).to_f32().is_nan());
            } else {
                assert_eq!(F16::from_f32(x).0, bits, "bits {bits:#06x} -> {x}");
            }
        }
    }

    #[test]
    fn f16_rounds_to_nearest_even() {
        assert_eq!(F16::from_f32(1.0).0, 0x3c00);
        // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties to even (1).
        assert_eq!(F16::from_f32(1.0 + 2f32.powi(-11)).0, 0x3c00);
        assert_eq!(F16::from_f32(1.0 + 3.0 * 2f32.powi(-11)).0, 0x3c02);
        assert_eq!(F16::from_f32(65520.0).0, 0x7c00);
        assert_eq!(F16::from_f32(-2.0).0, 0xc000);
        assert_eq!(F16::from_f32(5.96e-8).0, 0x0001);
    }

    /// The value of an FP8 code from its definition (sign, biased
    /// exponent, mantissa), independent of `to_f32`; None for NaN.
    fn fp8_value(code: u8, ebits: u32, mbits: u32, bias: i32, e4m3: bool) -> Option<f64> {
        let sign = if code & 0x80 != 0 { -1.0 } else { 1.0 };
        let e = i32::from(code >> mbits) & ((1 << ebits) - 1);
        let m = f64::from(code & ((1 << mbits) - 1));
        let all_ones = (1 << ebits) - 1;
        if e4m3 && e == all_ones && m == 7.0 {
            return None;
        }
        if !e4m3 && e == all_ones {
            return if m == 0.0 {
                Some(sign * f64::INFINITY)
            } else {
                None
            };
        }
        let scale = 2f64.powi(mbits as i32);
        let v = if e == 0 {
            m / scale * 2f64.powi(1 - bias)
        } else {
            (1.0 + m / scale) * 2f64.powi(e - bias)
        };
        Some(sign * v)
    }

    /// The reference rounding: the nearest finite code by exhaustive search
    /// over the 256 codes (ties to the even code), saturating.
    fn nearest(x: f32, decode: impl Fn(u8) -> Option<f64>) -> u8 {
        let x = f64::from(x);
        let mut best: Option<(f64, u8)> = None;
        for code in 0..=255u8 {
            let Some(v) = decode(code) else { continue };
            if !v.is_finite() || (v == 0.0 && (code & 0x80 != 0) != x.is_sign_negative()) {
                continue;
            }
            let d = (v - x).abs();
            best = match best {
                Some((bd, bc)) if bd < d || (bd == d && bc & 1 == 0) => Some((bd, bc)),
                _ => Some((d, code)),
            };
        }
        best.unwrap().1
    }

    #[test]
    fn fp8_decodes_every_code_exactly() {
        for code in 0..=255u8 {
            match fp8_value(code, 4, 3, 7, true) {
                None => assert!(F8E4M3(code).to_f32().is_nan() && F8E4M3(code).is_nan()),
                Some(v) => {
                    assert_eq!(f64::from(F8E4M3(code).to_f32()), v, "e4m3 {code:#04x}");
                    assert!(!F8E4M3(code).is_nan());
                    // Every value converts back to its own code.
                    assert_eq!(F8E4M3::from_f32(F8E4M3(code).to_f32()).0, code);
                }
            }
            match fp8_value(code, 5, 2, 15, false) {
                None => assert!(F8E5M2(code).to_f32().is_nan() && F8E5M2(code).is_nan()),
                Some(v) => {
                    assert_eq!(f64::from(F8E5M2(code).to_f32()), v, "e5m2 {code:#04x}");
                    assert!(!F8E5M2(code).is_nan());
                    if v.is_finite() {
                        assert_eq!(F8E5M2::from_f32(F8E5M2(code).to_f32()).0, code);
                    }
                }
            }
        }
        assert_eq!(F8E4M3::MAX.to_f32(), 448.0);
        assert_eq!(F8E5M2::MAX.to_f32(), 57344.0);
        assert_eq!(F8E4M3(0x01).to_f32(), 2f32.powi(-9));
        assert_eq!(F8E5M2(0x01).to_f32(), 2f32.powi(-16));
        assert_eq!(F8E4M3(0x08).to_f32(), 2f32.powi(-6));
        assert_eq!(F8E5M2(0x04).to_f32(), 2f32.powi(-14));
        assert_eq!(F8E5M2::INFINITY.to_f32(), f32::INFINITY);
        assert_eq!(F8E5M2(0xfc).to_f32(), f32::NEG_INFINITY);
        assert!(F8E4M3(0x80).to_f32() == 0.0 && F8E4M3(0x80).to_f32().is_sign_negative());
    }

    #[test]
    fn fp8_rounds_to_nearest_even_and_saturates() {
        let e4 = |x: f32| F8E4M3::from_f32(x).0;
        let e5 = |x: f32| F8E5M2::from_f32(x).0;
        // Ties: 1 + 2^-4 lies halfway between 1 (0x38) and 1.125 (0x39).
        assert_eq!(e4(1.0 + 2f32.powi(-4)), 0x38);
        assert_eq!(e4(1.125 + 2f32.powi(-4)), 0x3a);
        assert_eq!(e4(1.0 + 2f32.powi(-4) + 2f32.powi(-20)), 0x39);
        assert_eq!(e5(1.0 + 2f32.powi(-3)), 0x3c);
        assert_eq!(e5(1.25 + 2f32.powi(-3)), 0x3e);
        // Subnormals and underflow: half the smallest subnormal ties to 0.
        assert_eq!(e4(2f32.powi(-10)), 0x00);
        assert_eq!(e4(2f32.powi(-10) * 1.0001), 0x01);
        assert_eq!(e4(3.0 * 2f32.powi(-10)), 0x02); // 1.5 ulp: tie to even 2
        assert_eq!(e4(-2f32.powi(-12)), 0x80);
        assert_eq!(e5(2f32.powi(-17)), 0x00);
        assert_eq!(e5(3.0 * 2f32.powi(-17)), 0x02);
        assert_eq!(e5(f32::from_bits(1)), 0x00);
        // The largest subnormal rounds up into the first normal binade.
        assert_eq!(e4(7.75 * 2f32.powi(-9)), 0x08);
        // Saturation: no infinity, no NaN from finite inputs.
        assert_eq!(e4(448.0), 0x7e);
        assert_eq!(e4(464.0), 0x7e); // tie between 448 and (NaN-coded) 480
        assert_eq!(e4(464.1), 0x7e);
        assert_eq!(e4(1e30), 0x7e);
        assert_eq!(e4(f32::INFINITY), 0x7e);
        assert_eq!(e4(f32::NEG_INFINITY), 0xfe);
        assert_eq!(e4(f32::MAX), 0x7e);
        assert_eq!(e5(57344.0), 0x7b);
        assert_eq!(e5(61440.0), 0x7b);
        assert_eq!(e5(f32::INFINITY), 0x7b);
        assert_eq!(e5(-1e38), 0xfb);
        // NaN.
        assert_eq!(e4(f32::NAN), 0x7f);
        assert_eq!(e4(-f32::NAN), 0xff);
        assert!(F8E5M2::from_f32(f32::NAN).is_nan());
        assert_eq!(e5(f32::NAN), 0x7e);
        assert_eq!(e5(f32::from_bits(0x7fe0_0000)), 0x7f);
        // Signed zeros.
        assert_eq!(e4(0.0), 0x00);
        assert_eq!(e4(-0.0), 0x80);
        assert_eq!(e5(-0.0), 0x80);
    }

    #[test]
    fn fp8_rounding_matches_an_exhaustive_nearest_search() {
        let d4 = |c: u8| fp8_value(c, 4, 3, 7, true);
        let d5 = |c: u8| fp8_value(c, 5, 2, 15, false);
        // Every code's value, the midpoints between neighbours and points
        // just off them, and a sweep of f32 bit patterns.
        let mut xs: Vec<f32> = Vec::new();
        for decode in [&d4 as &dyn Fn(u8) -> Option<f64>, &d5] {
            let mut values: Vec<f64> = (0..=255u8)
                .filter_map(decode)
                .filter(|v| v.is_finite())
                .collect();
            values.sort_by(f64::total_cmp);
            values.dedup();
            for w in values.windows(2) {
                let mid = (w[0] + w[1]) / 2.0;
                for x in [w[0], mid, w[1]] {
                    let x = x as f32;
                    xs.extend([
                        x,
                        f32::from_bits(x.to_bits() + 1),
                        f32::from_bits(x.to_bits().max(1) - 1),
                    ]);
                }
            }
        }
        for bits in (0..=0x7f80_0000u32).step_by(4099) {
            xs.push(f32::from_bits(bits));
            xs.push(-f32::from_bits(bits));
        }
        for &x in xs.iter().filter(|x| x.is_finite()) {
            let want4 = if x.abs() > 464.0 {
                (((x.to_bits() >> 24) & 0x80) as u8) | 0x7e
            } else {
                nearest(x, d4)
            };
            assert_eq!(
                F8E4M3::from_f32(x).0,
                want4,
                "e4m3 of {x:e} ({:#010x})",
                x.to_bits()
            );
            let want5 = if x.abs() > 61440.0 {
                (((x.to_bits() >> 24) & 0x80) as u8) | 0x7b
            } else {
                nearest(x, d5)
            };
            assert_eq!(
                F8E5M2::from_f32(x).0,
                want5,
                "e5m2 of {x:e} ({:#010x})",
                x.to_bits()
            );
        }
    }

    #[test]
    fn bf16_round_trips_and_rounds() {
        for bits in (0..=u16::MAX).step_by(7) {
            let x = Bf16(bits).to_f32();
            if !x.is_nan() {
                assert_eq!(Bf16::from_f32(x).0, bits);
            }
        }
        assert_eq!(Bf16::from_f32(1.0).0, 0x3f80);
        assert_eq!(Bf16::from_f32(1.0 + 2f32.powi(-8)).0, 0x3f80);
        assert_eq!(Bf16::from_f32(1.0 + 3.0 * 2f32.powi(-8)).0, 0x3f82);
        assert!(Bf16::from_f32(f32::NAN).to_f32().is_nan());
    }
}
