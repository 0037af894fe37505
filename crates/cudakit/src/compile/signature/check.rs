//! The launch-time type check, reduced to small values compared at each
//! launch: what each argument stands for ([`ArgType`], stated by its
//! `KernelArg` impl as a constant) against what each parameter takes
//! ([`ParamRule`], computed once from the parameter's [`CType`] or its PTX
//! declaration when the function is looked up). No string is built or
//! compared unless a check fails.
//!
//! A rule never refuses what it cannot judge: an unknown parameter type
//! ([`ParamRule::Any`]), an argument whose Rust type states no C type
//! ([`ElementType::Unknown`]) and the raw escape ([`ArgType::Untyped`]) all
//! pass, with only their sizes checked.

use super::ptx::{PtxClass, PtxParam};
use super::{CType, VectorType};
use crate::memory::{name_hash, ElementType, Scalar};

/// What holds the memory a pointer argument points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Container {
    /// `&DeviceBuffer<T>`.
    DeviceBuffer,
    /// `DeviceView<T>`.
    DeviceView,
    /// `&mut UnifiedBuffer<T>`.
    UnifiedBuffer,
    /// `&VirtualBuffer<T>`.
    VirtualBuffer,
    /// `&ImportedBuffer<T>`.
    ImportedBuffer,
    /// A view of a `PoolBuffer<T>` (stream-ordered memory).
    PoolBuffer,
}

impl Container {
    fn name(self) -> &'static str {
        match self {
            Container::DeviceBuffer => "DeviceBuffer",
            Container::DeviceView => "DeviceView",
            Container::UnifiedBuffer => "UnifiedBuffer",
            Container::VirtualBuffer => "VirtualBuffer",
            Container::ImportedBuffer => "ImportedBuffer",
            Container::PoolBuffer => "PoolBuffer",
        }
    }
}

/// The C type a kernel argument stands for, as its `KernelArg` impl states
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgType {
    /// Bytes passed through the `unsafe` escape
    /// ([`ParamList::push_untyped`](crate::ParamList::push_untyped)): no
    /// type is checked, only the size.
    Untyped,
    /// A value of a [`DeviceCopy`](crate::DeviceCopy) type.
    Value(ElementType),
    /// A buffer's device address: `T*`, or `const T*` (`T` the element).
    Pointer {
        /// The element type.
        element: ElementType,
        /// What holds the memory.
        container: Container,
        /// A read-only view: fits `const T*` only. (cudakit has no such
        /// view yet: every buffer argument may be written.)
        read_only: bool,
    },
    /// A texture object: `cudaTextureObject_t` (`unsigned long long`).
    Texture,
    /// A surface object: `cudaSurfaceObject_t` (`unsigned long long`).
    Surface,
    /// A tensor map by value: `CUtensorMap` (`struct CUtensorMap_st`).
    TensorMap,
}

impl ArgType {
    /// The argument as an error names it: `i32`, `DeviceBuffer<f64>`,
    /// `&Texture`. `type_name` (the Rust type's `std::any::type_name`) is
    /// used where the element type states no C type.
    pub fn describe(&self, type_name: &str) -> String {
        let element = |e: &ElementType| {
            e.rust_name()
                .unwrap_or_else(|| short_type_name(type_name.trim_start_matches("*mut ")))
        };
        match self {
            ArgType::Untyped => format!("raw bytes ({})", short_type_name(type_name)),
            ArgType::Value(e) => element(e),
            ArgType::Pointer {
                element: e,
                container,
                ..
            } => format!("{}<{}>", container.name(), element(e)),
            ArgType::Texture => "&Texture".to_owned(),
            ArgType::Surface => "&mut Surface".to_owned(),
            ArgType::TensorMap => "&TensorMap".to_owned(),
        }
    }
}

/// `a::b::C<d::E>` as `C<E>`: every path keeps its last segment.
pub(crate) fn short_type_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("::") {
            // Drop the segment just written.
            while out
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
            {
                out.pop();
            }
            rest = after;
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Builtin numbers as a bit set, one bit per [`Scalar`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScalarSet(u16);

impl ScalarSet {
    const fn bit(s: Scalar) -> u16 {
        1 << (s as u16)
    }

    /// The set holding `s` alone.
    pub const fn of(s: Scalar) -> ScalarSet {
        ScalarSet(Self::bit(s))
    }

    /// The set holding `a` and `b`.
    pub const fn pair(a: Scalar, b: Scalar) -> ScalarSet {
        ScalarSet(Self::bit(a) | Self::bit(b))
    }

    /// Both sets together.
    pub const fn with(self, other: ScalarSet) -> ScalarSet {
        ScalarSet(self.0 | other.0)
    }

    /// Whether `s` is in the set.
    #[inline]
    pub fn contains(self, s: Scalar) -> bool {
        self.0 & Self::bit(s) != 0
    }
}

/// What a pointer parameter may point at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PointeeRule {
    /// `void`: any element.
    Any,
    /// A builtin number (an array of it too: `[f32; 3]` elements are
    /// floats).
    Scalars(ScalarSet),
    /// A CUDA vector type: arrays of its lanes, or a struct of its name.
    Vector {
        /// The lane type.
        element: Scalar,
        /// Lanes.
        lanes: u8,
        /// The hash of the vector type's name.
        name: u64,
    },
    /// A struct, by the hash of its C name.
    Struct(u64),
    /// A pointer (a `T**` parameter): no buffer's element is one.
    Indirect,
}

/// What one kernel parameter takes, as checked at each launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParamRule {
    /// The type is not known: any argument (its size is still checked).
    Any,
    /// A builtin number passed by value; `handles` also admits texture and
    /// surface objects (`unsigned long long`, which their C types are).
    Scalars {
        /// The numbers admitted.
        set: ScalarSet,
        /// Whether texture and surface objects are admitted.
        handles: bool,
    },
    /// A CUDA vector type by value.
    Vector {
        /// The lane type.
        element: Scalar,
        /// Lanes.
        lanes: u8,
        /// The hash of the vector type's name.
        name: u64,
    },
    /// A struct by value, by the hash of its C name.
    Struct(u64),
    /// A pointer.
    Pointer {
        /// What it points at.
        pointee: PointeeRule,
        /// Whether the pointee is `const` (any buffer fits; a read-only view
        /// fits only these).
        is_const: bool,
    },
    /// Only PTX is known: the parameter's class and width.
    Ptx {
        /// The element class.
        class: PtxClass,
        /// Bytes.
        size: u32,
        /// Whether it is a `.b8` array (a struct).
        array: bool,
    },
}

/// The hash of `CUtensorMap_st`, the struct `CUtensorMap` names.
const TENSOR_MAP: u64 = name_hash("CUtensorMap_st");

fn scalar_of(ty: &CType) -> Option<(Scalar, bool)> {
    Some(match ty {
        CType::Bool | CType::UnsignedChar | CType::Char8 => (Scalar::U8, false),
        CType::Char | CType::SignedChar => (Scalar::I8, false),
        CType::Short => (Scalar::I16, false),
        CType::UnsignedShort | CType::Char16 => (Scalar::U16, false),
        CType::Int | CType::WChar => (Scalar::I32, false),
        CType::UnsignedInt | CType::Char32 => (Scalar::U32, false),
        CType::Long | CType::LongLong => (Scalar::I64, false),
        CType::UnsignedLong => (Scalar::U64, false),
        CType::UnsignedLongLong => (Scalar::U64, true),
        CType::Int128 => (Scalar::I128, false),
        CType::UnsignedInt128 => (Scalar::U128, false),
        CType::Float => (Scalar::F32, false),
        CType::Double => (Scalar::F64, false),
        CType::Half => (Scalar::F16, false),
        CType::Bfloat16 => (Scalar::Bf16, false),
        CType::Fp8E4M3 => (Scalar::F8E4M3, false),
        CType::Fp8E5M2 => (Scalar::F8E5M2, false),
        _ => return None,
    })
}

/// The numbers a parameter of C type `ty` takes: its own, and for
/// `unsigned short` also [`F16`](crate::F16) and [`Bf16`](crate::Bf16),
/// which are kept as their bits (`#[repr(transparent)] u16`) and which
/// kernels commonly take as `unsigned short` bits; likewise `unsigned char`
/// for [`F8E4M3`](crate::F8E4M3) and [`F8E5M2`](crate::F8E5M2). `__half`,
/// `__nv_bfloat16`, `__nv_fp8_e4m3` and `__nv_fp8_e5m2` take only their own
/// type.
fn scalars_of(ty: &CType) -> Option<(ScalarSet, bool)> {
    let (s, handles) = scalar_of(ty)?;
    let set = if s == Scalar::U16 {
        ScalarSet::of(s).with(ScalarSet::pair(Scalar::F16, Scalar::Bf16))
    } else if matches!(ty, CType::UnsignedChar) {
        // FP8 values kept as their bits, as kernels without CUDA's fp8
        // header take them; `__nv_fp8_e4m3` and `__nv_fp8_e5m2` take only
        // their own format.
        ScalarSet::of(s).with(ScalarSet::pair(Scalar::F8E4M3, Scalar::F8E5M2))
    } else {
        ScalarSet::of(s)
    };
    Some((set, handles))
}

fn vector_rule(v: VectorType) -> Option<(Scalar, u8, u64)> {
    let (element, _) = scalar_of(&v.element())?;
    Some((element, v.lanes() as u8, name_hash(v.name())))
}

impl ParamRule {
    /// The rule for a parameter of C type `ty`.
    pub fn from_ctype(ty: &CType) -> ParamRule {
        if !ty.is_known() {
            return ParamRule::Any;
        }
        if let Some((set, handles)) = scalars_of(ty) {
            return ParamRule::Scalars { set, handles };
        }
        match ty {
            CType::Vector(v) => match vector_rule(*v) {
                Some((element, lanes, name)) => ParamRule::Vector {
                    element,
                    lanes,
                    name,
                },
                None => ParamRule::Any,
            },
            CType::Named(named) => ParamRule::Struct(name_hash(&named.to_string())),
            CType::Pointer { pointee, quals } => {
                let pointee = match &**pointee {
                    CType::Void => PointeeRule::Any,
                    CType::Vector(v) => match vector_rule(*v) {
                        Some((element, lanes, name)) => PointeeRule::Vector {
                            element,
                            lanes,
                            name,
                        },
                        None => PointeeRule::Any,
                    },
                    CType::Named(named) => PointeeRule::Struct(name_hash(&named.to_string())),
                    CType::Pointer { .. } => PointeeRule::Indirect,
                    other => match scalars_of(other) {
                        Some((set, _)) => PointeeRule::Scalars(set),
                        None => return ParamRule::Any,
                    },
                };
                ParamRule::Pointer {
                    pointee,
                    is_const: quals.is_const,
                }
            }
            _ => ParamRule::Any,
        }
    }

    /// The rule for a parameter known from its PTX declaration only.
    pub fn from_ptx(param: &PtxParam) -> ParamRule {
        ParamRule::Ptx {
            class: param.class,
            size: u32::try_from(param.size()).unwrap_or(u32::MAX),
            array: param.array_len.is_some(),
        }
    }

    /// Whether an argument of type `arg` and `size` bytes fits the
    /// parameter. Sizes are checked here only for PTX rules (the size check
    /// against `cuFuncGetParamInfo` covers the rest).
    #[inline]
    pub fn accepts(&self, arg: &ArgType, size: usize) -> bool {
        match (self, arg) {
            (ParamRule::Any, _)
            | (_, ArgType::Untyped)
            | (_, ArgType::Value(ElementType::Unknown)) => true,
            (
                ParamRule::Ptx {
                    class,
                    size: want,
                    array,
                },
                _,
            ) => ptx_accepts(*class, *want as usize, *array, arg, size),
            (ParamRule::Scalars { set, .. }, ArgType::Value(ElementType::Scalar(s))) => {
                set.contains(*s)
            }
            (ParamRule::Scalars { handles, .. }, ArgType::Texture | ArgType::Surface) => *handles,
            (
                ParamRule::Vector { element, lanes, .. },
                ArgType::Value(ElementType::Array { element: e, len }),
            ) => element == e && usize::from(*lanes) == *len,
            (ParamRule::Vector { name, .. }, ArgType::Value(ElementType::Struct(s)))
            | (ParamRule::Struct(name), ArgType::Value(ElementType::Struct(s))) => {
                s.hash() == *name
            }
            (ParamRule::Struct(name), ArgType::TensorMap) => *name == TENSOR_MAP,
            (
                ParamRule::Pointer { pointee, is_const },
                ArgType::Pointer {
                    element, read_only, ..
                },
            ) => (*is_const || !*read_only) && pointee_accepts(*pointee, element),
            _ => false,
        }
    }
}

#[inline]
fn pointee_accepts(rule: PointeeRule, element: &ElementType) -> bool {
    match (rule, element) {
        (PointeeRule::Any, _) | (_, ElementType::Unknown) => true,
        (PointeeRule::Scalars(set), ElementType::Scalar(s))
        | (PointeeRule::Scalars(set), ElementType::Array { element: s, .. }) => set.contains(*s),
        (PointeeRule::Vector { element, lanes, .. }, ElementType::Array { element: e, len }) => {
            element == *e && usize::from(lanes) == *len
        }
        (PointeeRule::Vector { name, .. }, ElementType::Struct(s))
        | (PointeeRule::Struct(name), ElementType::Struct(s)) => s.hash() == name,
        _ => false,
    }
}

/// The PTX rule: what [`PtxParam::check`] says, on the argument's class.
fn ptx_accepts(class: PtxClass, want: usize, array: bool, arg: &ArgType, size: usize) -> bool {
    if want != size {
        return false;
    }
    #[derive(PartialEq)]
    enum Class {
        Float,
        Half,
        Integer,
        /// An FP8 value's byte: `.u8` (`unsigned char`) or a one-byte
        /// struct (`__nv_fp8_e4m3`, `.b8 [1]`).
        Byte,
        /// A pointer or an object handle: NVRTC declares these `.u64`,
        /// never as a byte array.
        Handle,
        Aggregate,
    }
    let got = match arg {
        ArgType::Value(ElementType::Scalar(s)) => match s {
            Scalar::F32 | Scalar::F64 => Class::Float,
            Scalar::F16 | Scalar::Bf16 => Class::Half,
            Scalar::F8E4M3 | Scalar::F8E5M2 => Class::Byte,
            _ => Class::Integer,
        },
        ArgType::Value(_) | ArgType::TensorMap => Class::Aggregate,
        ArgType::Pointer { .. } | ArgType::Texture | ArgType::Surface => Class::Handle,
        ArgType::Untyped => return true,
    };
    match (array, class, got) {
        // A byte array is a struct (or a vector) by value: never a pointer
        // or a handle; any value of its size may be one.
        (true, _, Class::Handle) => false,
        (true, _, Class::Aggregate | Class::Half | Class::Byte) => true,
        (true, PtxClass::Bits, _) | (false, PtxClass::Bits, _) => true,
        (true, _, _) => false,
        (false, PtxClass::Float, Class::Float | Class::Half) => true,
        (
            false,
            PtxClass::Signed | PtxClass::Unsigned,
            Class::Integer | Class::Handle | Class::Byte,
        ) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_declared;
    use super::*;
    use crate::memory::StructName;

    #[test]
    fn a_ptx_byte_array_never_takes_a_pointer_or_a_handle() {
        let ptr = ArgType::Pointer {
            element: ElementType::Scalar(Scalar::F32),
            container: Container::DeviceBuffer,
            read_only: false,
        };
        // `.align 8 .b8 p[8]`: a struct of 8 bytes by value.
        assert!(!ptx_accepts(PtxClass::Bits, 8, true, &ptr, 8));
        assert!(!ptx_accepts(PtxClass::Bits, 8, true, &ArgType::Texture, 8));
        assert!(ptx_accepts(
            PtxClass::Bits,
            8,
            true,
            &ArgType::Value(ElementType::Scalar(Scalar::F64)),
            8
        ));
        // `.u64 p`: a pointer, a handle or a 64-bit integer.
        assert!(ptx_accepts(PtxClass::Unsigned, 8, false, &ptr, 8));
        assert!(ptx_accepts(
            PtxClass::Unsigned,
            8,
            false,
            &ArgType::Surface,
            8
        ));
        assert!(!ptx_accepts(
            PtxClass::Unsigned,
            8,
            false,
            &ArgType::Value(ElementType::Scalar(Scalar::F64)),
            8
        ));
    }

    fn rule(decl: &str) -> ParamRule {
        ParamRule::from_ctype(&parse_declared(decl).unwrap()[0])
    }

    const S: StructName = StructName::new("Params");
    const OTHER: StructName = StructName::new("Other");
    const F4: StructName = StructName::new("float4");

    fn value(s: Scalar) -> ArgType {
        ArgType::Value(ElementType::Scalar(s))
    }

    fn buffer(e: ElementType) -> ArgType {
        ArgType::Pointer {
            element: e,
            container: Container::DeviceBuffer,
            read_only: false,
        }
    }

    #[test]
    fn builtin_pairings() {
        use Scalar::*;
        let cases: &[(&str, Scalar)] = &[
            ("float", F32),
            ("double", F64),
            ("int", I32),
            ("unsigned int", U32),
            ("long", I64),
            ("long long", I64),
            ("unsigned long", U64),
            ("unsigned long long", U64),
            ("short", I16),
            ("unsigned short", U16),
            ("signed char", I8),
            ("char", I8),
            ("unsigned char", U8),
            ("bool", U8),
            ("__half", F16),
            ("__nv_bfloat16", Bf16),
            ("__nv_fp8_e4m3", F8E4M3),
            ("__nv_fp8_e5m2", F8E5M2),
            ("__int128", I128),
            ("unsigned __int128", U128),
        ];
        let all = [
            I8, U8, I16, U16, I32, U32, I64, U64, I128, U128, F32, F64, F16, Bf16, F8E4M3, F8E5M2,
        ];
        for (decl, fits) in cases {
            let r = rule(decl);
            for s in all {
                // F16 and Bf16 are u16 bits: `unsigned short` takes them;
                // the FP8 formats are u8 bits: `unsigned char` takes them.
                let bits = (*decl == "unsigned short" && matches!(s, F16 | Bf16))
                    || (*decl == "unsigned char" && matches!(s, F8E4M3 | F8E5M2));
                assert_eq!(
                    r.accepts(&value(s), 0),
                    s == *fits || bits,
                    "{decl} given {s:?}"
                );
            }
            assert!(!r.accepts(&buffer(ElementType::Scalar(*fits)), 8), "{decl}");
        }
    }

    #[test]
    fn pointers_structs_vectors_and_handles() {
        let f32s = ElementType::Scalar(Scalar::F32);
        let f64s = ElementType::Scalar(Scalar::F64);
        assert!(rule("float*").accepts(&buffer(f32s), 8));
        assert!(rule("const float*").accepts(&buffer(f32s), 8));
        assert!(!rule("const double*").accepts(&buffer(f32s), 8));
        assert!(!rule("float*").accepts(&buffer(f64s), 8));
        assert!(!rule("float*").accepts(&value(Scalar::U64), 8));
        assert!(!rule("float**").accepts(&buffer(ElementType::Scalar(Scalar::U64)), 8));
        assert!(rule("void*").accepts(&buffer(f64s), 8));
        let halves = ElementType::Scalar(Scalar::F16);
        assert!(rule("const unsigned short*").accepts(&buffer(halves), 8));
        assert!(rule("__half*").accepts(&buffer(halves), 8));
        assert!(!rule("__nv_bfloat16*").accepts(&buffer(halves), 8));
        assert!(!rule("__half*").accepts(&buffer(ElementType::Scalar(Scalar::U16)), 8));
        // The FP8 formats: their own type, or `unsigned char` bits; never
        // the other format, and no plain byte buffer for an FP8 type.
        let (e4m3, e5m2) = (
            ElementType::Scalar(Scalar::F8E4M3),
            ElementType::Scalar(Scalar::F8E5M2),
        );
        assert!(rule("const __nv_fp8_e4m3*").accepts(&buffer(e4m3), 8));
        assert!(!rule("const __nv_fp8_e4m3*").accepts(&buffer(e5m2), 8));
        assert!(!rule("__nv_fp8_e5m2*").accepts(&buffer(e4m3), 8));
        assert!(!rule("__nv_fp8_e4m3*").accepts(&buffer(ElementType::Scalar(Scalar::U8)), 8));
        assert!(rule("unsigned char*").accepts(&buffer(e4m3), 8));
        assert!(rule("const unsigned char*").accepts(&buffer(e5m2), 8));
        assert!(rule("float*").accepts(
            &buffer(ElementType::Array {
                element: Scalar::F32,
                len: 3
            }),
            8
        ));
        let read_only = ArgType::Pointer {
            element: f32s,
            container: Container::DeviceView,
            read_only: true,
        };
        assert!(rule("const float*").accepts(&read_only, 8));
        assert!(!rule("float*").accepts(&read_only, 8));
        assert!(rule("Params").accepts(&ArgType::Value(ElementType::Struct(&S)), 24));
        assert!(!rule("Params").accepts(&ArgType::Value(ElementType::Struct(&OTHER)), 24));
        assert!(rule("Params*").accepts(&buffer(ElementType::Struct(&S)), 8));
        assert!(!rule("Params*").accepts(&buffer(ElementType::Struct(&OTHER)), 8));
        let f4 = rule("float4");
        assert!(f4.accepts(
            &ArgType::Value(ElementType::Array {
                element: Scalar::F32,
                len: 4
            }),
            16
        ));
        assert!(!f4.accepts(
            &ArgType::Value(ElementType::Array {
                element: Scalar::I32,
                len: 4
            }),
            16
        ));
        assert!(f4.accepts(&ArgType::Value(ElementType::Struct(&F4)), 16));
        assert!(rule("const float4*").accepts(&buffer(ElementType::Struct(&F4)), 8));
        assert!(rule("cudaTextureObject_t").accepts(&ArgType::Texture, 8));
        assert!(rule("cudaSurfaceObject_t").accepts(&ArgType::Surface, 8));
        assert!(!rule("int").accepts(&ArgType::Texture, 8));
        assert!(rule("CUtensorMap").accepts(&ArgType::TensorMap, 128));
        assert!(!rule("Params").accepts(&ArgType::TensorMap, 128));
        // What cannot be judged passes.
        assert!(rule("float").accepts(&ArgType::Untyped, 4));
        assert!(rule("float").accepts(&ArgType::Value(ElementType::Unknown), 4));
        assert!(ParamRule::from_ctype(&CType::Unknown).accepts(&value(Scalar::F64), 8));
    }

    #[test]
    fn ptx_rules_catch_class_and_width() {
        let p = |class, element_size, array_len: Option<usize>| PtxParam {
            name: "p".into(),
            class,
            element_size,
            array_len,
            align: element_size,
            is_pointer: false,
            pointee_align: None,
        };
        let f32_param = ParamRule::from_ptx(&p(PtxClass::Float, 4, None));
        assert!(f32_param.accepts(&value(Scalar::F32), 4));
        assert!(!f32_param.accepts(&value(Scalar::I32), 4));
        assert!(!f32_param.accepts(&value(Scalar::F64), 8));
        let u32_param = ParamRule::from_ptx(&p(PtxClass::Unsigned, 4, None));
        // PTX writes int and unsigned alike: signedness is not caught.
        assert!(u32_param.accepts(&value(Scalar::I32), 4));
        assert!(u32_param.accepts(&value(Scalar::U32), 4));
        assert!(!u32_param.accepts(&value(Scalar::F32), 4));
        let u64_param = ParamRule::from_ptx(&p(PtxClass::Unsigned, 8, None));
        assert!(u64_param.accepts(&buffer(ElementType::Scalar(Scalar::F64)), 8));
        let bytes = ParamRule::from_ptx(&p(PtxClass::Bits, 1, Some(24)));
        assert!(bytes.accepts(&ArgType::Value(ElementType::Struct(&S)), 24));
        assert!(!bytes.accepts(&ArgType::Value(ElementType::Struct(&S)), 16));
    }

    #[test]
    fn arguments_are_described_as_written() {
        assert_eq!(
            buffer(ElementType::Scalar(Scalar::F64)).describe("*mut f64"),
            "DeviceBuffer<f64>"
        );
        assert_eq!(
            buffer(ElementType::Unknown).describe("*mut my_crate::Wide"),
            "DeviceBuffer<Wide>"
        );
        assert_eq!(value(Scalar::I32).describe("i32"), "i32");
        assert_eq!(short_type_name("a::b::C<d::E, [f::G; 2]>"), "C<E, [G; 2]>");
    }
}
