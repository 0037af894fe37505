//! Kernel signatures as C types: the model that a launch's arguments are
//! checked against.
//!
//! A signature comes from one of three places:
//! - the Itanium-mangled name of a C++ kernel ([`demangle()`]), which carries
//!   every parameter's full C++ type;
//! - a signature the user declares for an `extern "C"` kernel
//!   ([`parse_declared`], C spelling such as `"float*, const float*, int"`);
//! - the PTX of any kernel ([`ptx::read_entries`]), which carries only each
//!   parameter's width and whether it is floating point, and against which a
//!   [`CType`] is checked with [`ptx::PtxParam::check`].
//!
//! [`CType`] prints in C spelling (`const float*`); the alternate form
//! (`{:#}`) prints as `c++filt` does (`float const*`).
//!
//! Sizes and alignments ([`CType::layout`]) are those of CUDA on 64-bit Linux:
//! `long` and pointers are 8 bytes.
//!
//! [`check`] reduces a parameter's type to a [`check::ParamRule`] and an
//! argument's to a [`check::ArgType`], the small values a launch compares.
//!
//! Nothing here is unsafe; only [`check`] depends on the rest of the crate
//! (on the element types of `memory`).

use std::fmt;

pub mod check;
pub mod demangle;
pub mod kernel;
pub mod ptx;

pub use demangle::{demangle, DemangleError, Signature};
pub use kernel::{KernelSignature, ParamType, SignatureSource};

/// A C or C++ type as a kernel parameter has it.
///
/// A type that the demangler or the declared-signature parser could not read
/// in full is [`CType::Unknown`] as a whole, never a partial guess: a pointer
/// to a function type is `Unknown`, not a pointer to something unknown.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CType {
    /// `void` (only behind a pointer, or a return type).
    Void,
    /// `bool`.
    Bool,
    /// `char` (a type of its own, distinct from `signed char`).
    Char,
    /// `signed char`.
    SignedChar,
    /// `unsigned char`.
    UnsignedChar,
    /// `short`.
    Short,
    /// `unsigned short`.
    UnsignedShort,
    /// `int`.
    Int,
    /// `unsigned int`.
    UnsignedInt,
    /// `long` (8 bytes).
    Long,
    /// `unsigned long` (8 bytes).
    UnsignedLong,
    /// `long long`.
    LongLong,
    /// `unsigned long long`.
    UnsignedLongLong,
    /// `__int128`.
    Int128,
    /// `unsigned __int128`.
    UnsignedInt128,
    /// `float`.
    Float,
    /// `double`.
    Double,
    /// `long double` (no device layout: CUDA has none).
    LongDouble,
    /// `wchar_t` (4 bytes).
    WChar,
    /// `char8_t`.
    Char8,
    /// `char16_t`.
    Char16,
    /// `char32_t`.
    Char32,
    /// `decltype(nullptr)`.
    NullPtr,
    /// CUDA's `__half` (a 2-byte struct; `half` is a typedef of it).
    Half,
    /// CUDA's `__nv_bfloat16` (a 2-byte struct).
    Bfloat16,
    /// CUDA's `__nv_fp8_e4m3` (a 1-byte struct).
    Fp8E4M3,
    /// CUDA's `__nv_fp8_e5m2` (a 1-byte struct).
    Fp8E5M2,
    /// One of CUDA's vector types: `float4`, `int2`, `uchar4`, `dim3`,
    /// `__half2`, ...
    Vector(VectorType),
    /// A pointer; `quals` qualify the pointee (`const float*`).
    Pointer {
        /// The type pointed to.
        pointee: Box<CType>,
        /// The pointee's qualifiers.
        quals: Qualifiers,
    },
    /// An lvalue reference; `quals` qualify the referee (`const float&`).
    Reference {
        /// The type referred to.
        referee: Box<CType>,
        /// The referee's qualifiers.
        quals: Qualifiers,
    },
    /// An rvalue reference (`float&&`).
    RvalueReference {
        /// The type referred to.
        referee: Box<CType>,
        /// The referee's qualifiers.
        quals: Qualifiers,
    },
    /// A struct, class, union or enum by name, with its namespace path and
    /// template arguments.
    Named(NamedType),
    /// A type that could not be read in full.
    Unknown,
}

/// `const`, `volatile` and `restrict` on a type, as a set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Qualifiers {
    /// `const`.
    pub is_const: bool,
    /// `volatile`.
    pub is_volatile: bool,
    /// `restrict` (`__restrict__`).
    pub is_restrict: bool,
}

impl Qualifiers {
    /// No qualifiers.
    pub const NONE: Qualifiers = Qualifiers {
        is_const: false,
        is_volatile: false,
        is_restrict: false,
    };
    /// `const` alone.
    pub const CONST: Qualifiers = Qualifiers {
        is_const: true,
        is_volatile: false,
        is_restrict: false,
    };

    /// Whether no qualifier is set.
    pub fn is_empty(self) -> bool {
        self == Qualifiers::NONE
    }

    /// Both sets together.
    pub fn union(self, other: Qualifiers) -> Qualifiers {
        Qualifiers {
            is_const: self.is_const || other.is_const,
            is_volatile: self.is_volatile || other.is_volatile,
            is_restrict: self.is_restrict || other.is_restrict,
        }
    }

    /// The qualifiers as words, in the order C spelling and `c++filt` use.
    fn words(self, style: Style) -> impl Iterator<Item = &'static str> {
        let restrict = match style {
            Style::C => "__restrict__",
            Style::Itanium => "restrict",
        };
        [
            (self.is_const, "const"),
            (self.is_volatile, "volatile"),
            (self.is_restrict, restrict),
        ]
        .into_iter()
        .filter_map(|(set, word)| set.then_some(word))
    }
}

/// One component of a qualified name: `Box<float>` in `app::Box<float>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NameComponent {
    /// The identifier; an anonymous namespace is `(anonymous namespace)`.
    pub name: String,
    /// Template arguments, for a template specialisation.
    pub template_args: Option<Vec<TemplateArg>>,
}

impl NameComponent {
    /// A plain identifier without template arguments.
    pub fn plain(name: impl Into<String>) -> NameComponent {
        NameComponent {
            name: name.into(),
            template_args: None,
        }
    }
}

/// A user type by name: `geo::Vec<float, 3>` is the path `geo`, `Vec<float, 3>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NamedType {
    /// The components, outermost first; the last is the type's own name.
    /// Never empty.
    pub path: Vec<NameComponent>,
}

impl NamedType {
    /// The type's own identifier, without scope or template arguments.
    pub fn base_name(&self) -> &str {
        self.path.last().map_or("", |c| c.name.as_str())
    }
}

/// A template argument.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TemplateArg {
    /// A type, with its top-level qualifiers (`foo<const int>`).
    Type {
        /// The type.
        ty: CType,
        /// Its top-level qualifiers.
        quals: Qualifiers,
    },
    /// An integer (or `bool`, `char`, enum) constant of type `ty`.
    Integer {
        /// The constant's type.
        ty: CType,
        /// Its value (`bool`: 0 or 1).
        value: i128,
    },
    /// A template parameter pack's arguments (printed inline).
    Pack(Vec<TemplateArg>),
    /// An argument that could not be read (an expression, an address).
    Unknown,
}

impl TemplateArg {
    /// Whether the argument is fully known.
    pub fn is_known(&self) -> bool {
        match self {
            TemplateArg::Type { ty, .. } | TemplateArg::Integer { ty, .. } => ty.is_known(),
            TemplateArg::Pack(args) => args.iter().all(TemplateArg::is_known),
            TemplateArg::Unknown => false,
        }
    }
}

/// What kind of value a parameter is, as far as its passing goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ValueClass {
    /// A floating-point scalar (`float`, `double`).
    Float,
    /// An integer scalar, `bool` and the character types included.
    Integer,
    /// A pointer or reference (passed as an address).
    Pointer,
    /// A struct passed by value as bytes (`__half`, vector types).
    Aggregate,
}

/// The size, alignment and class of a parameter's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layout {
    /// Size in bytes.
    pub size: usize,
    /// Alignment in bytes.
    pub align: usize,
    /// Float, integer, pointer or aggregate.
    pub class: ValueClass,
}

impl CType {
    /// Whether the type is fully known (no [`CType::Unknown`] anywhere in it).
    pub fn is_known(&self) -> bool {
        match self {
            CType::Unknown => false,
            CType::Pointer { pointee: t, .. }
            | CType::Reference { referee: t, .. }
            | CType::RvalueReference { referee: t, .. } => t.is_known(),
            CType::Named(named) => named.path.iter().all(|c| {
                c.template_args
                    .as_ref()
                    .map_or(true, |args| args.iter().all(TemplateArg::is_known))
            }),
            _ => true,
        }
    }

    /// A pointer to `pointee` qualified by `quals`; `Unknown` stays `Unknown`.
    pub fn pointer_to(pointee: CType, quals: Qualifiers) -> CType {
        if pointee.is_known() {
            CType::Pointer {
                pointee: Box::new(pointee),
                quals,
            }
        } else {
            CType::Unknown
        }
    }

    /// The type that a single global identifier names: a vector type,
    /// `__half`, `__nv_bfloat16`, or else a [`CType::Named`] type.
    pub fn from_global_name(name: &str) -> CType {
        match name {
            "__half" => CType::Half,
            "__nv_bfloat16" => CType::Bfloat16,
            "__nv_fp8_e4m3" => CType::Fp8E4M3,
            "__nv_fp8_e5m2" => CType::Fp8E5M2,
            _ => VectorType::from_name(name).map_or_else(
                || {
                    CType::Named(NamedType {
                        path: vec![NameComponent::plain(name)],
                    })
                },
                CType::Vector,
            ),
        }
    }

    /// The size, alignment and value class of the type as a kernel parameter
    /// on CUDA's 64-bit Linux ABI (references are passed as pointers).
    /// `None` where it is not known here: `void`, `long double`, user types,
    /// unknown types.
    pub fn layout(&self) -> Option<Layout> {
        let scalar = |size: usize, class| {
            Some(Layout {
                size,
                align: size,
                class,
            })
        };
        use ValueClass::{Float, Integer};
        match self {
            CType::Bool | CType::Char | CType::SignedChar | CType::UnsignedChar | CType::Char8 => {
                scalar(1, Integer)
            }
            CType::Short | CType::UnsignedShort | CType::Char16 => scalar(2, Integer),
            CType::Int | CType::UnsignedInt | CType::WChar | CType::Char32 => scalar(4, Integer),
            CType::Long | CType::UnsignedLong | CType::LongLong | CType::UnsignedLongLong => {
                scalar(8, Integer)
            }
            CType::Int128 | CType::UnsignedInt128 => scalar(16, Integer),
            CType::Float => scalar(4, Float),
            CType::Double => scalar(8, Float),
            CType::Half | CType::Bfloat16 => scalar(2, ValueClass::Aggregate),
            CType::Fp8E4M3 | CType::Fp8E5M2 => scalar(1, ValueClass::Aggregate),
            CType::Vector(v) => Some(Layout {
                size: v.size(),
                align: v.align(),
                class: ValueClass::Aggregate,
            }),
            CType::NullPtr
            | CType::Pointer { .. }
            | CType::Reference { .. }
            | CType::RvalueReference { .. } => scalar(8, ValueClass::Pointer),
            CType::Void | CType::LongDouble | CType::Named(_) | CType::Unknown => None,
        }
    }

    /// The builtin type's spelling, if it is one.
    fn builtin_name(&self) -> Option<&'static str> {
        Some(match self {
            CType::Void => "void",
            CType::Bool => "bool",
            CType::Char => "char",
            CType::SignedChar => "signed char",
            CType::UnsignedChar => "unsigned char",
            CType::Short => "short",
            CType::UnsignedShort => "unsigned short",
            CType::Int => "int",
            CType::UnsignedInt => "unsigned int",
            CType::Long => "long",
            CType::UnsignedLong => "unsigned long",
            CType::LongLong => "long long",
            CType::UnsignedLongLong => "unsigned long long",
            CType::Int128 => "__int128",
            CType::UnsignedInt128 => "unsigned __int128",
            CType::Float => "float",
            CType::Double => "double",
            CType::LongDouble => "long double",
            CType::WChar => "wchar_t",
            CType::Char8 => "char8_t",
            CType::Char16 => "char16_t",
            CType::Char32 => "char32_t",
            CType::NullPtr => "decltype(nullptr)",
            CType::Half => "__half",
            CType::Bfloat16 => "__nv_bfloat16",
            CType::Fp8E4M3 => "__nv_fp8_e4m3",
            CType::Fp8E5M2 => "__nv_fp8_e5m2",
            _ => return None,
        })
    }
}

/// How a type is spelled: C (`const float*`) or as `c++filt` prints
/// (`float const*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    C,
    Itanium,
}

impl Style {
    fn of(f: &fmt::Formatter<'_>) -> Style {
        if f.alternate() {
            Style::Itanium
        } else {
            Style::C
        }
    }
}

/// Writes `ty` qualified by `quals`.
fn write_qualified(
    f: &mut fmt::Formatter<'_>,
    ty: &CType,
    quals: Qualifiers,
    style: Style,
) -> fmt::Result {
    let indirect = matches!(
        ty,
        CType::Pointer { .. } | CType::Reference { .. } | CType::RvalueReference { .. }
    );
    if style == Style::C && !indirect {
        for word in quals.words(style) {
            write!(f, "{word} ")?;
        }
        write_type(f, ty, style)
    } else {
        write_type(f, ty, style)?;
        for word in quals.words(style) {
            write!(f, " {word}")?;
        }
        Ok(())
    }
}

/// Writes `ty` without top-level qualifiers.
fn write_type(f: &mut fmt::Formatter<'_>, ty: &CType, style: Style) -> fmt::Result {
    if let Some(name) = ty.builtin_name() {
        return f.write_str(name);
    }
    match ty {
        CType::Vector(v) => f.write_str(v.name()),
        CType::Pointer { pointee, quals } => {
            write_qualified(f, pointee, *quals, style)?;
            f.write_str("*")
        }
        CType::Reference { referee, quals } => {
            write_qualified(f, referee, *quals, style)?;
            f.write_str("&")
        }
        CType::RvalueReference { referee, quals } => {
            write_qualified(f, referee, *quals, style)?;
            f.write_str("&&")
        }
        CType::Named(named) => write_path(f, &named.path, style),
        _ => f.write_str("<unknown type>"),
    }
}

/// Writes `a::b<args>::c`.
fn write_path(f: &mut fmt::Formatter<'_>, path: &[NameComponent], style: Style) -> fmt::Result {
    for (i, component) in path.iter().enumerate() {
        if i > 0 {
            f.write_str("::")?;
        }
        f.write_str(&component.name)?;
        if let Some(args) = &component.template_args {
            write_template_args(f, args, style)?;
        }
    }
    Ok(())
}

/// Writes `<a, b>`, packs inline, with `> >` where a list ends in `>`.
fn write_template_args(
    f: &mut fmt::Formatter<'_>,
    args: &[TemplateArg],
    style: Style,
) -> fmt::Result {
    let mut text = String::new();
    let mut first = true;
    flatten_args(args, &mut |arg| {
        if !first {
            text.push_str(", ");
        }
        first = false;
        text.push_str(&match style {
            Style::C => format!("{}", Arg(arg)),
            Style::Itanium => format!("{:#}", Arg(arg)),
        });
    });
    let close = if text.ends_with('>') { " >" } else { ">" };
    write!(f, "<{text}{close}")
}

fn flatten_args(args: &[TemplateArg], each: &mut dyn FnMut(&TemplateArg)) {
    for arg in args {
        match arg {
            TemplateArg::Pack(inner) => flatten_args(inner, each),
            other => each(other),
        }
    }
}

/// One template argument, for display.
struct Arg<'a>(&'a TemplateArg);

impl fmt::Display for Arg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let style = Style::of(f);
        match self.0 {
            TemplateArg::Type { ty, quals } => write_qualified(f, ty, *quals, style),
            TemplateArg::Integer { ty, value } => {
                let suffix = match ty {
                    CType::Bool => return f.write_str(if *value != 0 { "true" } else { "false" }),
                    CType::Int => "",
                    CType::UnsignedInt => "u",
                    CType::Long => "l",
                    CType::UnsignedLong => "ul",
                    CType::LongLong => "ll",
                    CType::UnsignedLongLong => "ull",
                    _ => {
                        f.write_str("(")?;
                        write_type(f, ty, style)?;
                        return write!(f, "){value}");
                    }
                };
                write!(f, "{value}{suffix}")
            }
            TemplateArg::Pack(args) => {
                let mut first = true;
                let mut result = Ok(());
                flatten_args(args, &mut |arg| {
                    if result.is_ok() {
                        let sep = if first { "" } else { ", " };
                        first = false;
                        result = if style == Style::Itanium {
                            write!(f, "{sep}{:#}", Arg(arg))
                        } else {
                            write!(f, "{sep}{}", Arg(arg))
                        };
                    }
                });
                result
            }
            TemplateArg::Unknown => f.write_str("<unknown argument>"),
        }
    }
}

impl fmt::Display for CType {
    /// C spelling (`const float*`); with `{:#}`, `c++filt`'s (`float const*`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_type(f, self, Style::of(f))
    }
}

impl fmt::Display for TemplateArg {
    /// C spelling; with `{:#}`, `c++filt`'s.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&Arg(self), f)
    }
}

impl fmt::Display for NamedType {
    /// `ns::Name<args>`; with `{:#}`, arguments in `c++filt`'s spelling.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_path(f, &self.path, Style::of(f))
    }
}

/// One of CUDA's built-in vector types (`float4`, `int2`, `uchar4`, `dim3`,
/// `__half2`, ...), with its element type and layout.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct VectorType(u8);

/// `(name, element, lanes, size, align)` for each vector type, as
/// `vector_types.h`, `cuda_fp16.h` and `cuda_bf16.h` declare them (64-bit
/// Linux: `long` is 8 bytes).
const VECTORS: &[(&str, Lane, u8, u8, u8)] = &vector_table();

/// A vector type's element, as a `Copy` value for the const table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lane {
    SignedChar,
    UnsignedChar,
    Short,
    UnsignedShort,
    Int,
    UnsignedInt,
    Long,
    UnsignedLong,
    LongLong,
    UnsignedLongLong,
    Float,
    Double,
    Half,
    Bfloat16,
}

impl Lane {
    fn to_ctype(self) -> CType {
        match self {
            Lane::SignedChar => CType::SignedChar,
            Lane::UnsignedChar => CType::UnsignedChar,
            Lane::Short => CType::Short,
            Lane::UnsignedShort => CType::UnsignedShort,
            Lane::Int => CType::Int,
            Lane::UnsignedInt => CType::UnsignedInt,
            Lane::Long => CType::Long,
            Lane::UnsignedLong => CType::UnsignedLong,
            Lane::LongLong => CType::LongLong,
            Lane::UnsignedLongLong => CType::UnsignedLongLong,
            Lane::Float => CType::Float,
            Lane::Double => CType::Double,
            Lane::Half => CType::Half,
            Lane::Bfloat16 => CType::Bfloat16,
        }
    }
}

/// The element, then `(size, align)` of the 1-, 2-, 3- and 4-lane forms.
type Family = (Lane, [(u8, u8); 4]);

const fn vector_table() -> [(&'static str, Lane, u8, u8, u8); 63] {
    const NAMES: [[&str; 4]; 12] = [
        ["char1", "char2", "char3", "char4"],
        ["uchar1", "uchar2", "uchar3", "uchar4"],
        ["short1", "short2", "short3", "short4"],
        ["ushort1", "ushort2", "ushort3", "ushort4"],
        ["int1", "int2", "int3", "int4"],
        ["uint1", "uint2", "uint3", "uint4"],
        ["long1", "long2", "long3", "long4"],
        ["ulong1", "ulong2", "ulong3", "ulong4"],
        ["longlong1", "longlong2", "longlong3", "longlong4"],
        ["ulonglong1", "ulonglong2", "ulonglong3", "ulonglong4"],
        ["float1", "float2", "float3", "float4"],
        ["double1", "double2", "double3", "double4"],
    ];
    const B: [(u8, u8); 4] = [(1, 1), (2, 2), (3, 1), (4, 4)];
    const S: [(u8, u8); 4] = [(2, 2), (4, 4), (6, 2), (8, 8)];
    const W: [(u8, u8); 4] = [(4, 4), (8, 8), (12, 4), (16, 16)];
    const D: [(u8, u8); 4] = [(8, 8), (16, 16), (24, 8), (32, 16)];
    const FAMILIES: [Family; 12] = [
        (Lane::SignedChar, B),
        (Lane::UnsignedChar, B),
        (Lane::Short, S),
        (Lane::UnsignedShort, S),
        (Lane::Int, W),
        (Lane::UnsignedInt, W),
        (Lane::Long, D),
        (Lane::UnsignedLong, D),
        (Lane::LongLong, D),
        (Lane::UnsignedLongLong, D),
        (Lane::Float, W),
        (Lane::Double, D),
    ];
    let mut table = [("", Lane::Int, 0, 0, 0); 63];
    let mut i = 0;
    while i < 12 {
        let mut lanes = 0;
        while lanes < 4 {
            let (size, align) = FAMILIES[i].1[lanes];
            table[i * 4 + lanes] = (NAMES[i][lanes], FAMILIES[i].0, lanes as u8 + 1, size, align);
            lanes += 1;
        }
        i += 1;
    }
    // CUDA 13's explicitly aligned 4-lane forms of the 8-byte families.
    let aligned: [(&str, Lane, u8); 10] = [
        ("long4_16a", Lane::Long, 16),
        ("long4_32a", Lane::Long, 32),
        ("ulong4_16a", Lane::UnsignedLong, 16),
        ("ulong4_32a", Lane::UnsignedLong, 32),
        ("longlong4_16a", Lane::LongLong, 16),
        ("longlong4_32a", Lane::LongLong, 32),
        ("ulonglong4_16a", Lane::UnsignedLongLong, 16),
        ("ulonglong4_32a", Lane::UnsignedLongLong, 32),
        ("double4_16a", Lane::Double, 16),
        ("double4_32a", Lane::Double, 32),
    ];
    let mut j = 0;
    while j < 10 {
        table[48 + j] = (aligned[j].0, aligned[j].1, 4, 32, aligned[j].2);
        j += 1;
    }
    table[58] = ("dim3", Lane::UnsignedInt, 3, 12, 4);
    table[59] = ("__half2", Lane::Half, 2, 4, 4);
    table[60] = ("__nv_bfloat162", Lane::Bfloat16, 2, 4, 4);
    table[61] = ("half2", Lane::Half, 2, 4, 4);
    table[62] = ("nv_bfloat162", Lane::Bfloat16, 2, 4, 4);
    table
}

impl VectorType {
    /// The vector type of this name (`"float4"`), if CUDA has one. `half2`
    /// and `nv_bfloat162` are read as the typedefs they are and print as
    /// `__half2` and `__nv_bfloat162`.
    pub fn from_name(name: &str) -> Option<VectorType> {
        let index = VECTORS.iter().position(|v| v.0 == name)?;
        let canonical = match VECTORS[index].0 {
            "half2" => "__half2",
            "nv_bfloat162" => "__nv_bfloat162",
            _ => return u8::try_from(index).ok().map(VectorType),
        };
        VectorType::from_name(canonical)
    }

    fn entry(self) -> &'static (&'static str, Lane, u8, u8, u8) {
        &VECTORS[usize::from(self.0)]
    }

    /// The type's name, as CUDA spells it.
    pub fn name(self) -> &'static str {
        self.entry().0
    }

    /// The type of each lane (`float` for `float4`, `__half` for `__half2`).
    pub fn element(self) -> CType {
        self.entry().1.to_ctype()
    }

    /// The number of lanes (1 to 4).
    pub fn lanes(self) -> usize {
        usize::from(self.entry().2)
    }

    /// Size in bytes.
    pub fn size(self) -> usize {
        usize::from(self.entry().3)
    }

    /// Alignment in bytes.
    pub fn align(self) -> usize {
        usize::from(self.entry().4)
    }
}

impl fmt::Debug for VectorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VectorType({})", self.name())
    }
}

/// Why a declared signature could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeclaredError {
    /// A parameter between commas is empty.
    EmptyParameter {
        /// The parameter's position, from 0.
        index: usize,
    },
    /// A character or word that is no part of a C type.
    UnexpectedToken {
        /// The parameter's position, from 0.
        index: usize,
        /// What was found.
        token: String,
    },
    /// Type specifiers that do not combine (`unsigned float`, `long char`,
    /// two type names).
    InvalidSpecifiers {
        /// The parameter's position, from 0.
        index: usize,
        /// The parameter as written.
        text: String,
    },
    /// Qualifiers or a name with no type (`const`, `*`).
    MissingType {
        /// The parameter's position, from 0.
        index: usize,
        /// The parameter as written.
        text: String,
    },
    /// A construct declared signatures do not cover.
    Unsupported {
        /// The parameter's position, from 0.
        index: usize,
        /// The construct.
        what: &'static str,
    },
}

impl fmt::Display for DeclaredError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeclaredError::EmptyParameter { index } => {
                write!(f, "declared signature: parameter {index} is empty")
            }
            DeclaredError::UnexpectedToken { index, token } => write!(
                f,
                "declared signature: parameter {index}: '{token}' is no part of a C type"
            ),
            DeclaredError::InvalidSpecifiers { index, text } => write!(
                f,
                "declared signature: parameter {index}: '{text}' is not a valid combination of type specifiers"
            ),
            DeclaredError::MissingType { index, text } => {
                write!(f, "declared signature: parameter {index}: '{text}' names no type")
            }
            DeclaredError::Unsupported { index, what } => write!(
                f,
                "declared signature: parameter {index}: {what} are not supported in declared signatures"
            ),
        }
    }
}

impl std::error::Error for DeclaredError {}

/// Reads a C parameter list as the user declares it for an `extern "C"`
/// kernel: `"float*, const float*, float, int"`.
///
/// Each parameter is a type in C spelling with an optional parameter name:
/// builtin types in any of their spellings (`unsigned`, `long long int`,
/// `signed char`), `const`/`volatile` on either side, pointers and
/// references (`float* const*`, `__restrict__` accepted and dropped on the
/// pointer itself), CUDA's vector types, `__half`/`half`,
/// `__nv_bfloat16`/`nv_bfloat16`, the fixed-width and size typedefs
/// (`size_t`, `uint32_t`, `int64_t`, ..., read as the types they are on
/// 64-bit Linux), `cudaTextureObject_t` and `cudaSurfaceObject_t`, and struct
/// names (`Params`, `struct Params`, `app::Params`). An empty list or `void`
/// is no parameters. A top-level `const` is dropped, as C++ drops it from
/// the function's type.
///
/// # Errors
/// A [`DeclaredError`] naming the parameter: an empty parameter, a token
/// that is no part of a type, specifiers that do not combine, no type at
/// all, or a construct not covered (template arguments, arrays, function
/// pointers).
pub fn parse_declared(text: &str) -> Result<Vec<CType>, DeclaredError> {
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed == "void" {
        return Ok(Vec::new());
    }
    trimmed
        .split(',')
        .enumerate()
        .map(|(index, param)| parse_declared_param(index, param.trim()))
        .collect()
}

/// Builtin specifiers seen so far in one parameter.
#[derive(Default)]
struct Specifiers {
    signed: bool,
    unsigned: bool,
    short: u8,
    long: u8,
    base: Option<&'static str>,
    name: Option<CType>,
}

impl Specifiers {
    fn is_empty(&self) -> bool {
        !self.signed
            && !self.unsigned
            && self.short == 0
            && self.long == 0
            && self.base.is_none()
            && self.name.is_none()
    }

    /// The type the specifiers name, if they combine.
    fn resolve(self) -> Option<CType> {
        if self.name.is_some() {
            return if self.is_builtin_free() {
                self.name
            } else {
                None
            };
        }
        let sign = match (self.signed, self.unsigned) {
            (true, true) => return None,
            (_, unsigned) => unsigned,
        };
        let ty = match (self.base, self.short, self.long) {
            (Some("void"), 0, 0) if !self.signed && !self.unsigned => CType::Void,
            (Some("bool"), 0, 0) if !self.signed && !self.unsigned => CType::Bool,
            (Some("float"), 0, 0) if !self.signed && !self.unsigned => CType::Float,
            (Some("double"), 0, 0) if !self.signed && !self.unsigned => CType::Double,
            (Some("double"), 0, 1) if !self.signed && !self.unsigned => CType::LongDouble,
            (Some("char"), 0, 0) => match (self.signed, self.unsigned) {
                (false, false) => CType::Char,
                (true, _) => CType::SignedChar,
                (_, true) => CType::UnsignedChar,
            },
            (Some("__int128"), 0, 0) => {
                if sign {
                    CType::UnsignedInt128
                } else {
                    CType::Int128
                }
            }
            (Some("int") | None, 1, 0) => {
                if sign {
                    CType::UnsignedShort
                } else {
                    CType::Short
                }
            }
            (Some("int") | None, 0, 0) => {
                if sign {
                    CType::UnsignedInt
                } else {
                    CType::Int
                }
            }
            (Some("int") | None, 0, 1) => {
                if sign {
                    CType::UnsignedLong
                } else {
                    CType::Long
                }
            }
            (Some("int") | None, 0, 2) => {
                if sign {
                    CType::UnsignedLongLong
                } else {
                    CType::LongLong
                }
            }
            _ => return None,
        };
        if self.base.is_none()
            && !self.signed
            && !self.unsigned
            && self.short == 0
            && self.long == 0
        {
            return None;
        }
        Some(ty)
    }

    fn is_builtin_free(&self) -> bool {
        !self.signed && !self.unsigned && self.short == 0 && self.long == 0 && self.base.is_none()
    }
}

/// The type a typedef or CUDA type name stands for.
fn declared_name(name: &str) -> CType {
    match name {
        "half" => CType::Half,
        "nv_bfloat16" => CType::Bfloat16,
        "size_t" | "uint64_t" | "uintptr_t" => CType::UnsignedLong,
        "ssize_t" | "ptrdiff_t" | "int64_t" | "intptr_t" => CType::Long,
        "int8_t" => CType::SignedChar,
        "uint8_t" => CType::UnsignedChar,
        "int16_t" => CType::Short,
        "uint16_t" => CType::UnsignedShort,
        "int32_t" => CType::Int,
        "uint32_t" => CType::UnsignedInt,
        "cudaTextureObject_t" | "cudaSurfaceObject_t" => CType::UnsignedLongLong,
        "CUtensorMap" => CType::from_global_name("CUtensorMap_st"),
        _ => CType::from_global_name(name),
    }
}

fn parse_declared_param(index: usize, text: &str) -> Result<CType, DeclaredError> {
    if text.is_empty() {
        return Err(DeclaredError::EmptyParameter { index });
    }
    let tokens = declared_tokens(index, text)?;
    let invalid = || DeclaredError::InvalidSpecifiers {
        index,
        text: text.to_owned(),
    };
    let mut specs = Specifiers::default();
    let mut quals = Qualifiers::NONE;
    let mut tokens = tokens.into_iter().peekable();
    let mut tag = false;
    // Specifiers and qualifiers, in any order, up to the first declarator.
    while let Some(token) = tokens.peek() {
        let word = token.as_str();
        match word {
            "const" => quals.is_const = true,
            "volatile" => quals.is_volatile = true,
            "signed" => specs.signed = true,
            "unsigned" => specs.unsigned = true,
            "short" => specs.short += 1,
            "long" => specs.long += 1,
            "struct" | "class" | "union" | "enum" => tag = true,
            "void" | "bool" | "_Bool" | "char" | "int" | "float" | "double" | "__int128" => {
                if specs.base.is_some() || specs.name.is_some() {
                    return Err(invalid());
                }
                specs.base = Some(match word {
                    "_Bool" => "bool",
                    "void" => "void",
                    "bool" => "bool",
                    "char" => "char",
                    "int" => "int",
                    "float" => "float",
                    "double" => "double",
                    _ => "__int128",
                });
            }
            "*" | "&" | "&&" => break,
            _ if is_identifier(word) => {
                if specs.name.is_some() || (!specs.is_empty() && !tag) {
                    // A second name after a type is the parameter's name.
                    break;
                }
                specs.name = Some(if word.contains("::") {
                    let path = word
                        .trim_start_matches("::")
                        .split("::")
                        .map(NameComponent::plain)
                        .collect::<Vec<_>>();
                    if path.len() == 1 {
                        declared_name(&path[0].name)
                    } else {
                        CType::Named(NamedType { path })
                    }
                } else {
                    declared_name(word)
                });
                tag = false;
            }
            _ => {
                return Err(DeclaredError::UnexpectedToken {
                    index,
                    token: word.to_owned(),
                })
            }
        }
        tokens.next();
    }
    if specs.is_empty() {
        return Err(DeclaredError::MissingType {
            index,
            text: text.to_owned(),
        });
    }
    if specs.short > 1 || specs.long > 2 {
        return Err(invalid());
    }
    let mut ty = specs.resolve().ok_or_else(invalid)?;
    // Declarators: pointers with their qualifiers, then references.
    let mut reference: Option<&'static str> = None;
    let mut name_seen = false;
    for token in tokens {
        match token.as_str() {
            _ if name_seen => {
                return Err(DeclaredError::UnexpectedToken { index, token });
            }
            "*" if reference.is_none() => {
                ty = CType::pointer_to(ty, quals);
                quals = Qualifiers::NONE;
            }
            "const" => quals.is_const = true,
            "volatile" => quals.is_volatile = true,
            "restrict" | "__restrict__" | "__restrict" => {
                if !matches!(ty, CType::Pointer { .. }) || reference.is_some() {
                    return Err(DeclaredError::UnexpectedToken { index, token });
                }
            }
            "&" | "&&" if reference.is_none() => {
                reference = Some(if token == "&" { "&" } else { "&&" });
            }
            word if is_identifier(word) && !word.contains("::") && !is_keyword(word) => {
                name_seen = true;
            }
            _ => return Err(DeclaredError::UnexpectedToken { index, token }),
        }
    }
    if let Some(kind) = reference {
        let referee = Box::new(ty);
        ty = if kind == "&" {
            CType::Reference { referee, quals }
        } else {
            CType::RvalueReference { referee, quals }
        };
    }
    if ty == CType::Void {
        return Err(DeclaredError::MissingType {
            index,
            text: text.to_owned(),
        });
    }
    Ok(ty)
}

fn is_keyword(word: &str) -> bool {
    matches!(
        word,
        "const"
            | "volatile"
            | "signed"
            | "unsigned"
            | "short"
            | "long"
            | "void"
            | "bool"
            | "_Bool"
            | "char"
            | "int"
            | "float"
            | "double"
            | "__int128"
            | "struct"
            | "class"
            | "union"
            | "enum"
            | "restrict"
            | "__restrict__"
            | "__restrict"
    )
}

fn is_identifier(word: &str) -> bool {
    let bare = word.trim_start_matches("::");
    !bare.is_empty()
        && bare.split("::").all(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// Splits one declared parameter into words (identifiers with their `::`
/// scopes) and the punctuation `*`, `&`, `&&`.
fn declared_tokens(index: usize, text: &str) -> Result<Vec<String>, DeclaredError> {
    let mut tokens = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'*' {
            tokens.push("*".to_owned());
            i += 1;
        } else if c == b'&' {
            if bytes.get(i + 1) == Some(&b'&') {
                tokens.push("&&".to_owned());
                i += 2;
            } else {
                tokens.push("&".to_owned());
                i += 1;
            }
        } else if c.is_ascii_alphanumeric() || c == b'_' || c == b':' {
            let start = i;
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b':')
            {
                i += 1;
            }
            let word = &text[start..i];
            if !is_identifier(word) {
                return Err(DeclaredError::UnexpectedToken {
                    index,
                    token: word.to_owned(),
                });
            }
            tokens.push(word.to_owned());
        } else {
            let what = match c {
                b'<' | b'>' => "template arguments",
                b'[' | b']' => "array parameters",
                b'(' | b')' => "function pointers",
                b'.' => "variadic parameters",
                _ => {
                    let token = text[i..]
                        .chars()
                        .next()
                        .map(String::from)
                        .unwrap_or_default();
                    return Err(DeclaredError::UnexpectedToken { index, token });
                }
            };
            return Err(DeclaredError::Unsupported { index, what });
        }
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ptr(t: CType) -> CType {
        CType::pointer_to(t, Qualifiers::NONE)
    }

    fn cptr(t: CType) -> CType {
        CType::pointer_to(t, Qualifiers::CONST)
    }

    #[test]
    fn display_c_and_itanium_spelling() {
        let t = CType::pointer_to(cptr(CType::Float), Qualifiers::CONST);
        assert_eq!(t.to_string(), "const float* const*");
        assert_eq!(format!("{t:#}"), "float const* const*");
        let r = CType::Reference {
            referee: Box::new(CType::Vector(VectorType::from_name("float4").unwrap())),
            quals: Qualifiers::CONST,
        };
        assert_eq!(r.to_string(), "const float4&");
        assert_eq!(format!("{r:#}"), "float4 const&");
        assert_eq!(CType::UnsignedLongLong.to_string(), "unsigned long long");
    }

    #[test]
    fn vector_table_layouts() {
        let check = |name: &str, elem: CType, lanes, size, align| {
            let v = VectorType::from_name(name).unwrap();
            assert_eq!(
                (v.name(), v.element(), v.lanes(), v.size(), v.align()),
                (name, elem, lanes, size, align),
                "{name}"
            );
        };
        check("float4", CType::Float, 4, 16, 16);
        check("float3", CType::Float, 3, 12, 4);
        check("double2", CType::Double, 2, 16, 16);
        check("double4", CType::Double, 4, 32, 16);
        check("uchar4", CType::UnsignedChar, 4, 4, 4);
        check("char3", CType::SignedChar, 3, 3, 1);
        check("short4", CType::Short, 4, 8, 8);
        check("ulonglong2", CType::UnsignedLongLong, 2, 16, 16);
        check("long4_32a", CType::Long, 4, 32, 32);
        check("dim3", CType::UnsignedInt, 3, 12, 4);
        check("__half2", CType::Half, 2, 4, 4);
        assert_eq!(VectorType::from_name("half2").unwrap().name(), "__half2");
        assert!(VectorType::from_name("float5").is_none());
        assert!(VECTORS.iter().all(|v| !v.0.is_empty() && v.2 > 0));
        let mut names: Vec<&str> = VECTORS.iter().map(|v| v.0).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), VECTORS.len());
    }

    #[test]
    fn layouts() {
        let l = |t: CType| t.layout().map(|l| (l.size, l.align, l.class));
        use ValueClass::*;
        assert_eq!(l(CType::Int), Some((4, 4, Integer)));
        assert_eq!(l(CType::Long), Some((8, 8, Integer)));
        assert_eq!(l(CType::Float), Some((4, 4, Float)));
        assert_eq!(l(CType::Double), Some((8, 8, Float)));
        assert_eq!(l(cptr(CType::Double)), Some((8, 8, Pointer)));
        assert_eq!(l(CType::Half), Some((2, 2, Aggregate)));
        assert_eq!(
            l(CType::from_global_name("float4")),
            Some((16, 16, Aggregate))
        );
        assert_eq!(l(CType::from_global_name("Params")), None);
        assert_eq!(l(CType::Unknown), None);
    }

    #[test]
    fn declared_builtins_and_pointers() {
        assert_eq!(
            parse_declared("float*, const float*, float, int").unwrap(),
            vec![
                ptr(CType::Float),
                cptr(CType::Float),
                CType::Float,
                CType::Int
            ]
        );
        let cases: &[(&str, CType)] = &[
            ("unsigned", CType::UnsignedInt),
            ("unsigned int n", CType::UnsignedInt),
            ("signed", CType::Int),
            ("long long int", CType::LongLong),
            ("unsigned long long", CType::UnsignedLongLong),
            ("long unsigned", CType::UnsignedLong),
            ("short", CType::Short),
            ("unsigned short int", CType::UnsignedShort),
            ("char", CType::Char),
            ("signed char", CType::SignedChar),
            ("unsigned char", CType::UnsignedChar),
            ("bool flag", CType::Bool),
            ("double", CType::Double),
            ("long double", CType::LongDouble),
            ("unsigned __int128", CType::UnsignedInt128),
            ("size_t n", CType::UnsignedLong),
            ("int64_t", CType::Long),
            ("uint8_t*", ptr(CType::UnsignedChar)),
            ("half", CType::Half),
            ("__nv_bfloat16 const *x", cptr(CType::Bfloat16)),
            ("float const* __restrict__ in", cptr(CType::Float)),
            ("const float* const p", cptr(CType::Float)),
            ("float4*", ptr(CType::from_global_name("float4"))),
            ("half2", CType::from_global_name("__half2")),
            ("void*", ptr(CType::Void)),
            ("const void *", cptr(CType::Void)),
            ("cudaTextureObject_t tex", CType::UnsignedLongLong),
            (
                "const float* const*",
                CType::pointer_to(cptr(CType::Float), Qualifiers::CONST),
            ),
            (
                "volatile int*",
                CType::pointer_to(
                    CType::Int,
                    Qualifiers {
                        is_volatile: true,
                        ..Qualifiers::NONE
                    },
                ),
            ),
            ("Params p", CType::from_global_name("Params")),
            ("struct Params* p", ptr(CType::from_global_name("Params"))),
            (
                "const app::Params*",
                cptr(CType::Named(NamedType {
                    path: vec![NameComponent::plain("app"), NameComponent::plain("Params")],
                })),
            ),
            (
                "const float& x",
                CType::Reference {
                    referee: Box::new(CType::Float),
                    quals: Qualifiers::CONST,
                },
            ),
        ];
        for (text, want) in cases {
            assert_eq!(
                &parse_declared(text).unwrap(),
                &vec![want.clone()],
                "{text}"
            );
        }
        assert_eq!(parse_declared("").unwrap(), vec![]);
        assert_eq!(parse_declared(" void ").unwrap(), vec![]);
    }

    #[test]
    fn declared_display_round_trips() {
        let text = "float*, const float*, const float* const*, unsigned int, long long, const __half*, float4";
        let params = parse_declared(text).unwrap();
        let shown = params
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        assert_eq!(shown, text);
    }

    #[test]
    fn declared_errors() {
        use DeclaredError::*;
        let err = |t: &str| parse_declared(t).unwrap_err();
        assert_eq!(err("float*, , int"), EmptyParameter { index: 1 });
        assert!(matches!(
            err("int, unsigned float"),
            InvalidSpecifiers { index: 1, .. }
        ));
        assert!(matches!(
            err("long long long"),
            InvalidSpecifiers { index: 0, .. }
        ));
        assert!(matches!(err("long char"), InvalidSpecifiers { .. }));
        assert!(matches!(err("signed unsigned"), InvalidSpecifiers { .. }));
        assert!(matches!(err("int float"), InvalidSpecifiers { .. }));
        assert!(matches!(err("const"), MissingType { .. }));
        assert!(matches!(err("*"), MissingType { .. }));
        assert!(matches!(err("int, void"), MissingType { index: 1, .. }));
        assert!(matches!(err("float* x y"), UnexpectedToken { .. }));
        assert!(matches!(err("int $"), UnexpectedToken { .. }));
        assert!(matches!(err("int 3x"), UnexpectedToken { .. }));
        assert_eq!(
            err("Box<float>"),
            Unsupported {
                index: 0,
                what: "template arguments"
            }
        );
        assert!(matches!(
            err("float[4]"),
            Unsupported {
                what: "array parameters",
                ..
            }
        ));
        assert!(matches!(err("void (*)(int)"), Unsupported { .. }));
        assert_eq!(
            err("float, Box<int>").to_string(),
            "declared signature: parameter 1: template arguments are not supported in declared signatures"
        );
        assert_eq!(
            err("unsigned float").to_string(),
            "declared signature: parameter 0: 'unsigned float' is not a valid combination of type specifiers"
        );
    }
}
