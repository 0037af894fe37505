//! Kernel parameter kinds as PTX declares them.
//!
//! Every kernel's PTX, `extern "C"` ones included, declares each parameter's
//! width and whether it is floating point:
//!
//! ```text
//! .visible .entry _Z5saxpyfPKfPfi(
//!     .param .f32 _Z5saxpyfPKfPfi_param_0,
//!     .param .u64 .ptr .global .align 4 _Z5saxpyfPKfPfi_param_1,
//!     .param .align 16 .b8 _Z5saxpyfPKfPfi_param_2[16]
//! )
//! ```
//!
//! [`read_entries`] reads those declarations; [`PtxParam::check`] says
//! whether a [`CType`] can be the parameter. NVRTC writes `int` and
//! `unsigned` both as `.u32` and every pointer as `.u64`, so PTX catches a
//! float given for an integer and width mismatches, but neither signedness
//! nor pointee types.

use std::fmt;

use super::{CType, ValueClass};

/// One `.entry` (kernel) of a PTX module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxEntry {
    /// The entry's name: the mangled name of a C++ kernel, the plain name
    /// of an `extern "C"` one.
    pub name: String,
    /// Its parameters, in order.
    pub params: Vec<PtxParam>,
}

/// What a PTX parameter's type says about its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PtxClass {
    /// `.f16`, `.f32`, `.f64`, `.bf16` (also `.f16x2`, `.bf16x2`).
    Float,
    /// `.s8` .. `.s64`.
    Signed,
    /// `.u8` .. `.u64`.
    Unsigned,
    /// `.b8` .. `.b128`: untyped bits (an array of `.b8` is a struct).
    Bits,
    /// `.pred`.
    Predicate,
}

/// One `.param` of an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxParam {
    /// The parameter's name (`NAME_param_0`).
    pub name: String,
    /// The element type's class.
    pub class: PtxClass,
    /// The element type's width in bytes (`.b8`: 1).
    pub element_size: usize,
    /// The array length (`[24]`), or `None` for a scalar.
    pub array_len: Option<usize>,
    /// The parameter's alignment: `.align N` where given, else the
    /// element's width.
    pub align: usize,
    /// Whether the declaration carries `.ptr` (a pointer in a state space).
    pub is_pointer: bool,
    /// The pointee's alignment after `.ptr` (`.ptr .global .align 16`).
    pub pointee_align: Option<usize>,
}

impl PtxParam {
    /// The parameter's size in bytes.
    pub fn size(&self) -> usize {
        self.element_size * self.array_len.unwrap_or(1)
    }

    /// Whether `ty` can be this parameter.
    ///
    /// [`PtxCheck::Mismatch`] only where the PTX rules `ty` out: another
    /// size, a floating-point type against an integer one or the reverse, a
    /// struct against a typed scalar, a vector type or `__half` of another
    /// alignment. [`PtxCheck::Unchecked`] where `ty`'s layout is not known
    /// here (user structs, unknown types).
    pub fn check(&self, ty: &CType) -> PtxCheck {
        let Some(layout) = ty.layout() else {
            return PtxCheck::Unchecked;
        };
        let size = self.size();
        if layout.size != size {
            return PtxCheck::Mismatch(format!(
                "PTX declares {size} bytes, '{ty}' is {} bytes",
                layout.size
            ));
        }
        let fits = match (self.array_len, self.class, layout.class) {
            // Bytes: a struct (or a large scalar) of that size and alignment.
            (Some(_), _, ValueClass::Aggregate) => layout.align == self.align,
            (Some(_), PtxClass::Bits, _) => true,
            (Some(_), _, _) => false,
            (None, PtxClass::Bits, _) => true,
            (None, PtxClass::Float, ValueClass::Float) => true,
            // NVRTC may write `__half`/`__nv_bfloat16` as a 16-bit float.
            (None, PtxClass::Float, ValueClass::Aggregate) => {
                matches!(ty, CType::Half | CType::Bfloat16)
            }
            (
                None,
                PtxClass::Signed | PtxClass::Unsigned,
                ValueClass::Integer | ValueClass::Pointer,
            ) => true,
            (None, PtxClass::Predicate, ValueClass::Integer) => matches!(ty, CType::Bool),
            _ => false,
        };
        if fits {
            PtxCheck::Matches
        } else {
            PtxCheck::Mismatch(format!("PTX declares {self}, which cannot hold '{ty}'"))
        }
    }
}

impl fmt::Display for PtxParam {
    /// The declaration's type, as PTX spells it: `.f32`, `.align 8 .b8[24]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = match self.class {
            PtxClass::Float => "f",
            PtxClass::Signed => "s",
            PtxClass::Unsigned => "u",
            PtxClass::Bits => "b",
            PtxClass::Predicate => return f.write_str(".pred"),
        };
        match self.array_len {
            Some(len) => write!(
                f,
                ".align {} .{prefix}{}[{len}]",
                self.align,
                self.element_size * 8
            ),
            None => write!(f, ".{prefix}{}", self.element_size * 8),
        }
    }
}

/// The verdict of [`PtxParam::check`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PtxCheck {
    /// The type fits the declaration.
    Matches,
    /// The type cannot be the parameter; the text says why.
    Mismatch(String),
    /// The type's layout is not known here; nothing is ruled out.
    Unchecked,
}

/// Why PTX text could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PtxError {
    /// The text ends inside an entry's parameter list or a comment.
    UnexpectedEnd {
        /// The entry being read.
        entry: String,
    },
    /// A parameter declaration this reader cannot read.
    BadParam {
        /// The entry.
        entry: String,
        /// The parameter's position, from 0.
        index: usize,
        /// The declaration's text.
        text: String,
    },
}

impl fmt::Display for PtxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PtxError::UnexpectedEnd { entry } => {
                write!(
                    f,
                    "ptx: entry '{entry}' ends before its parameter list does"
                )
            }
            PtxError::BadParam { entry, index, text } => write!(
                f,
                "ptx: entry '{entry}': cannot read parameter {index} ('{text}')"
            ),
        }
    }
}

impl std::error::Error for PtxError {}

/// Reads every `.entry` declaration of a PTX module, in order: its name and
/// its parameters' kinds. `.func` declarations are not kernels and are
/// skipped; comments, `.visible`/`.weak`/`.extern` linkage and any
/// whitespace are allowed.
///
/// # Errors
/// [`PtxError`] for an entry whose parameter list ends early or holds a
/// declaration that is not a `.param`.
pub fn read_entries(ptx: &str) -> Result<Vec<PtxEntry>, PtxError> {
    let text = strip_comments(ptx);
    let mut entries = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = find_directive(rest, ".entry") {
        rest = rest[at + ".entry".len()..].trim_start();
        let name_len = rest
            .find(|c: char| c.is_whitespace() || c == '(' || c == '{' || c == ';')
            .unwrap_or(rest.len());
        let name = rest[..name_len].to_owned();
        rest = rest[name_len..].trim_start();
        let mut params = Vec::new();
        if let Some(list) = rest.strip_prefix('(') {
            let close = list.find(')').ok_or_else(|| PtxError::UnexpectedEnd {
                entry: name.clone(),
            })?;
            let body = &list[..close];
            if !body.trim().is_empty() {
                for (index, decl) in body.split(',').enumerate() {
                    params.push(read_param(decl).ok_or_else(|| PtxError::BadParam {
                        entry: name.clone(),
                        index,
                        text: decl.split_whitespace().collect::<Vec<_>>().join(" "),
                    })?);
                }
            }
            rest = &list[close + 1..];
        }
        entries.push(PtxEntry { name, params });
    }
    Ok(entries)
}

/// The device runtime's kernel-launch entry points: a kernel whose code
/// reaches one of them uses dynamic parallelism (a launch from the
/// device). `cudaGraphLaunch` (device graph launch) is not among them.
const DEVICE_LAUNCH_CALLS: &[&str] = &[
    "cudaLaunchDevice",
    "cudaLaunchDeviceV2",
    "__cudaCDP2LaunchDevice",
    "__cudaCDP2LaunchDeviceV2",
];

/// The kernels (`.entry` names) of `ptx` whose code launches kernels from
/// the device (dynamic parallelism): those that call a device-runtime
/// launch entry point (`cudaLaunchDevice`, `cudaLaunchDeviceV2` and
/// their `__cudaCDP2` spellings) themselves or through the
/// `.func`s of the same PTX, at any depth. A call through a function
/// pointer, or to a function of another module, is not seen.
pub fn dynamic_parallelism_entries(ptx: &str) -> std::collections::BTreeSet<String> {
    use std::collections::{BTreeMap, BTreeSet};
    let text = strip_comments(ptx);
    // Every definition with a body: (name, is an entry, the body's words).
    let mut defs: Vec<(String, bool, BTreeSet<&str>)> = Vec::new();
    let mut rest = text.as_str();
    loop {
        let entry = find_directive(rest, ".entry").map(|at| (at, true, ".entry".len()));
        let func = find_directive(rest, ".func").map(|at| (at, false, ".func".len()));
        let Some((at, is_entry, len)) = (match (entry, func) {
            (Some(e), Some(f)) => Some(if e.0 < f.0 { e } else { f }),
            (e, f) => e.or(f),
        }) else {
            break;
        };
        rest = rest[at + len..].trim_start();
        // `.func (.param .b32 retval) name (...)`: skip a return list.
        if rest.starts_with('(') {
            match rest.find(')') {
                Some(close) => rest = rest[close + 1..].trim_start(),
                None => break,
            }
        }
        let name_len = rest
            .find(|c: char| c.is_whitespace() || c == '(' || c == '{' || c == ';')
            .unwrap_or(rest.len());
        let name = rest[..name_len].to_owned();
        rest = &rest[name_len..];
        // A declaration ends at `;` before any `{`; a definition has a body.
        let open = rest.find('{');
        let semi = rest.find(';');
        let Some(open) = open.filter(|&o| semi.map_or(true, |s| o < s)) else {
            continue;
        };
        let mut depth = 0usize;
        let mut end = rest.len();
        for (i, c) in rest[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let body = &rest[open..end];
        let words = body
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
            .filter(|w| !w.is_empty())
            .collect();
        defs.push((name, is_entry, words));
        rest = &rest[end.min(rest.len())..];
    }
    // Which definitions reach a launch call, to a fixed point.
    let mut launching: BTreeMap<&str, bool> = defs
        .iter()
        .map(|(name, _, words)| {
            let direct = DEVICE_LAUNCH_CALLS.iter().any(|c| words.contains(c));
            (name.as_str(), direct)
        })
        .collect();
    loop {
        let mut changed = false;
        for (name, _, words) in &defs {
            if launching[name.as_str()] {
                continue;
            }
            if words
                .iter()
                .any(|w| launching.get(w).copied() == Some(true))
            {
                launching.insert(name.as_str(), true);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    defs.iter()
        .filter(|(name, is_entry, _)| *is_entry && launching[name.as_str()])
        .map(|(name, _, _)| name.clone())
        .collect()
}

/// The offset of `directive` where it stands as a word of its own.
fn find_directive(text: &str, directive: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = text[from..].find(directive) {
        let at = from + found;
        let end = at + directive.len();
        let before_ok = text[..at]
            .chars()
            .next_back()
            .map_or(true, |c| c.is_whitespace() || c == '}' || c == ';');
        let after_ok = text[end..]
            .chars()
            .next()
            .map_or(true, |c| c.is_whitespace() || c == '(');
        if before_ok && after_ok {
            return Some(at);
        }
        from = end;
    }
    None
}

/// The text with `//` and `/* */` comments blanked out (strings kept).
fn strip_comments(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    let mut chars = ptx.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push(c);
                while let Some(s) = chars.next() {
                    out.push(s);
                    if s == '\\' {
                        if let Some(escaped) = chars.next() {
                            out.push(escaped);
                        }
                    } else if s == '"' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'/') => {
                for s in chars.by_ref() {
                    if s == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = '\0';
                for s in chars.by_ref() {
                    if last == '*' && s == '/' {
                        break;
                    }
                    last = s;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

/// One `.param [.align N] .TYPE [.ptr [.SPACE] [.align N]] NAME[[N]]`.
fn read_param(decl: &str) -> Option<PtxParam> {
    let spaced = decl.replace('[', " [ ").replace(']', " ] ");
    let mut words = spaced.split_whitespace().peekable();
    if words.next()? != ".param" {
        return None;
    }
    let mut align = None;
    let mut element = None;
    let mut is_pointer = false;
    let mut pointee_align = None;
    let mut name = None;
    let mut array_len = None;
    while let Some(word) = words.next() {
        match word {
            ".align" => {
                let n: usize = words.next()?.parse().ok()?;
                if !n.is_power_of_two() {
                    return None;
                }
                if is_pointer {
                    pointee_align = Some(n);
                } else {
                    align = Some(n);
                }
            }
            ".ptr" => is_pointer = true,
            ".global" | ".shared" | ".const" | ".local" => {
                if !is_pointer {
                    return None;
                }
            }
            "[" => {
                let n: usize = words.next()?.parse().ok()?;
                if words.next()? != "]" || name.is_none() || array_len.is_some() {
                    return None;
                }
                array_len = Some(n);
            }
            _ if word.starts_with('.') && element.is_none() => element = Some(element_type(word)?),
            _ if !word.starts_with('.') && name.is_none() => name = Some(word.to_owned()),
            _ => return None,
        }
    }
    let (class, element_size) = element?;
    Some(PtxParam {
        name: name?,
        class,
        element_size,
        array_len,
        align: align.unwrap_or(element_size),
        is_pointer,
        pointee_align,
    })
}

/// `.f32` → (Float, 4), ...
fn element_type(word: &str) -> Option<(PtxClass, usize)> {
    Some(match word {
        ".pred" => (PtxClass::Predicate, 1),
        ".f16" | ".bf16" => (PtxClass::Float, 2),
        ".f16x2" | ".bf16x2" => (PtxClass::Float, 4),
        _ => {
            let (class, bits) = match word.get(..2)? {
                ".f" => (PtxClass::Float, &word[2..]),
                ".s" => (PtxClass::Signed, &word[2..]),
                ".u" => (PtxClass::Unsigned, &word[2..]),
                ".b" => (PtxClass::Bits, &word[2..]),
                _ => return None,
            };
            let bits: usize = bits.parse().ok()?;
            let allowed = match class {
                PtxClass::Float => matches!(bits, 32 | 64),
                PtxClass::Bits => matches!(bits, 8 | 16 | 32 | 64 | 128),
                _ => matches!(bits, 8 | 16 | 32 | 64),
            };
            if !allowed {
                return None;
            }
            (class, bits / 8)
        }
    })
}

#[cfg(test)]
mod tests {

    #[test]
    fn kernels_that_launch_from_the_device_are_found_through_their_functions() {
        let ptx = r#"
.version 9.0
.target sm_90
.address_size 64
// a comment naming cudaLaunchDeviceV2 does not count
.extern .func  (.param .b32 func_retval0) __cudaCDP2LaunchDeviceV2
(
	.param .b64 __cudaCDP2LaunchDeviceV2_param_0,
	.param .b64 __cudaCDP2LaunchDeviceV2_param_1
)
;
.extern .func  (.param .b32 func_retval0) cudaGraphLaunch
(
	.param .b64 cudaGraphLaunch_param_0,
	.param .b64 cudaGraphLaunch_param_1
)
;
.visible .entry _Z5childPf(
	.param .u64 _Z5childPf_param_0
)
{
	ret;
}
.visible .func _Z6helperPf(
	.param .b64 _Z6helperPf_param_0
)
{
	{ // callseq 1, 0
	.param .b32 retval0;
	call.uni (retval0),
	__cudaCDP2LaunchDeviceV2,
	(
	param0,
	param1
	);
	} // callseq 1
	ret;
}
.visible .func _Z5outerPf(
	.param .b64 _Z5outerPf_param_0
)
{
	{ // callseq 2, 0
	call.uni
	_Z6helperPf,
	(
	param0
	);
	} // callseq 2
	ret;
}
.visible .entry parent(
	.param .u64 parent_param_0
)
{
	{ // callseq 3, 0
	call.uni
	_Z5outerPf,
	(
	param0
	);
	} // callseq 3
	ret;
}
.visible .entry tail(
	.param .u64 tail_param_0
)
{
	{ // callseq 4, 0
	.param .b32 retval0;
	call.uni (retval0),
	cudaGraphLaunch,
	(
	param0,
	param1
	);
	} // callseq 4
	ret;
}
"#;
        let found: Vec<String> = dynamic_parallelism_entries(ptx).into_iter().collect();
        assert_eq!(found, vec!["parent".to_owned()]);
        assert!(dynamic_parallelism_entries(".version 9.0\n").is_empty());
    }

    use super::super::{parse_declared, Qualifiers};
    use super::*;

    const SAMPLE: &str = r#"
//
// Generated by NVIDIA NVVM Compiler
//
.version 8.5
.target sm_90
.address_size 64
.file 1 "/tmp/k.cu//x"

	// .globl	_Z5saxpyfPKfPfi
.visible .entry _Z5saxpyfPKfPfi(
	.param .f32 _Z5saxpyfPKfPfi_param_0,
	.param .u64 .ptr .global .align 4 _Z5saxpyfPKfPfi_param_1, // x
	.param .u64 _Z5saxpyfPKfPfi_param_2,
	.param .u32 _Z5saxpyfPKfPfi_param_3
)
.maxntid 256, 1, 1
{
	.reg .f32 %f<4>;
	ret;
}
.func helper(.param .b32 a) { ret; }
/* .entry commented_out( .param .f32 x ) */
.weak .entry with_struct(.param .align 8 .b8 with_struct_param_0 [24],
    .param .align 16 .b8 with_struct_param_1[16],.param .f64 d,
    .param .s8 c, .param .u16 s, .param .align 2 .b8 h[2], .param .b32 bits)
{
	ret;
}
.entry no_params()
{
	ret;
}
.entry bare
{
	ret;
}
"#;

    #[test]
    fn reads_entries() {
        let entries = read_entries(SAMPLE).unwrap();
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            ["_Z5saxpyfPKfPfi", "with_struct", "no_params", "bare"]
        );
        let saxpy = &entries[0].params;
        assert_eq!(saxpy.len(), 4);
        assert_eq!((saxpy[0].class, saxpy[0].size()), (PtxClass::Float, 4));
        assert_eq!((saxpy[1].class, saxpy[1].size()), (PtxClass::Unsigned, 8));
        assert!(saxpy[1].is_pointer);
        assert_eq!((saxpy[1].align, saxpy[1].pointee_align), (8, Some(4)));
        assert_eq!(saxpy[3].name, "_Z5saxpyfPKfPfi_param_3");
        let s = &entries[1].params;
        assert_eq!(s.len(), 7);
        assert_eq!(
            (s[0].class, s[0].size(), s[0].align),
            (PtxClass::Bits, 24, 8)
        );
        assert_eq!(s[0].array_len, Some(24));
        assert_eq!((s[1].size(), s[1].align), (16, 16));
        assert_eq!((s[2].class, s[2].size()), (PtxClass::Float, 8));
        assert_eq!((s[3].class, s[3].size()), (PtxClass::Signed, 1));
        assert_eq!(s[0].to_string(), ".align 8 .b8[24]");
        assert_eq!(s[2].to_string(), ".f64");
        assert!(entries[2].params.is_empty() && entries[3].params.is_empty());
    }

    #[test]
    fn bad_ptx() {
        assert!(matches!(
            read_entries(".entry k(.param .f32 a"),
            Err(PtxError::UnexpectedEnd { .. })
        ));
        assert!(matches!(
            read_entries(".entry k(.param .f31 a)"),
            Err(PtxError::BadParam { index: 0, .. })
        ));
        assert!(matches!(
            read_entries(".entry k(.param .f32 a, .reg .f32 b)"),
            Err(PtxError::BadParam { index: 1, .. })
        ));
        assert!(matches!(
            read_entries(".entry k(.param .f32 a, )"),
            Err(PtxError::BadParam { index: 1, .. })
        ));
        assert_eq!(read_entries("").unwrap(), vec![]);
    }

    #[test]
    fn checks_types_against_params() {
        let entries = read_entries(SAMPLE).unwrap();
        let saxpy = &entries[0].params;
        let want = parse_declared("float, const float*, float*, int").unwrap();
        for (p, t) in saxpy.iter().zip(&want) {
            assert_eq!(p.check(t), PtxCheck::Matches, "{p} {t}");
        }
        // PTX cannot tell int from unsigned, nor float* from double*.
        assert_eq!(saxpy[3].check(&CType::UnsignedInt), PtxCheck::Matches);
        assert_eq!(
            saxpy[2].check(&CType::pointer_to(CType::Double, Qualifiers::NONE)),
            PtxCheck::Matches
        );
        // It does tell float from int, and widths apart.
        assert!(matches!(saxpy[0].check(&CType::Int), PtxCheck::Mismatch(_)));
        assert!(matches!(
            saxpy[3].check(&CType::Float),
            PtxCheck::Mismatch(_)
        ));
        assert!(matches!(
            saxpy[0].check(&CType::Double),
            PtxCheck::Mismatch(_)
        ));
        assert!(matches!(
            saxpy[3].check(&CType::LongLong),
            PtxCheck::Mismatch(_)
        ));
        assert!(matches!(saxpy[1].check(&CType::Int), PtxCheck::Mismatch(_)));
        assert_eq!(
            saxpy[0].check(&CType::Int),
            PtxCheck::Mismatch("PTX declares .f32, which cannot hold 'int'".into())
        );
        let s = &entries[1].params;
        let float4 = CType::from_global_name("float4");
        assert_eq!(s[1].check(&float4), PtxCheck::Matches);
        assert!(matches!(s[0].check(&float4), PtxCheck::Mismatch(_)));
        assert!(matches!(
            s[1].check(&CType::from_global_name("float3")),
            PtxCheck::Mismatch(_)
        ));
        assert!(matches!(s[2].check(&float4), PtxCheck::Mismatch(_)));
        assert_eq!(
            s[0].check(&CType::from_global_name("Params")),
            PtxCheck::Unchecked
        );
        assert_eq!(s[0].check(&CType::Unknown), PtxCheck::Unchecked);
        assert_eq!(s[3].check(&CType::Char), PtxCheck::Matches);
        assert_eq!(s[4].check(&CType::Short), PtxCheck::Matches);
        assert_eq!(s[5].check(&CType::Half), PtxCheck::Matches);
        // Bytes of the right size are not ruled out for a scalar (`__int128` travels so).
        assert_eq!(s[5].check(&CType::Short), PtxCheck::Matches);
        assert_eq!(s[6].check(&CType::Float), PtxCheck::Matches);
        assert_eq!(s[6].check(&CType::Int), PtxCheck::Matches);
    }

    /// The entry declarations NVRTC 13.0 (`-arch=compute_90
    /// --device-int128`) wrote for:
    ///
    /// ```text
    /// struct Params { float a; int b; double c; };
    /// __global__ void k(float, double, int, unsigned, long, long long, short,
    ///   unsigned short, char, signed char, unsigned char, bool, __half,
    ///   __nv_bfloat16, __half2, float4, float3, double2, int2, char4, dim3,
    ///   Params, const float*, float* __restrict__, __int128) {}
    /// template <class T> __global__ void t(T, const T*) {}
    /// template __global__ void t<float>(float, const float*);
    /// extern "C" __global__ void ck(float*, int) {}
    /// ```
    const NVRTC_13: &str = "// Cuda compilation tools, release 13.0, V13.0.88
.version 9.0
.target sm_90
.address_size 64

.visible .entry _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn(
	.param .f32 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_0,
	.param .f64 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_1,
	.param .u32 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_2,
	.param .u32 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_3,
	.param .u64 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_4,
	.param .u64 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_5,
	.param .u16 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_6,
	.param .u16 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_7,
	.param .u8 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_8,
	.param .u8 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_9,
	.param .u8 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_10,
	.param .u8 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_11,
	.param .align 2 .b8 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_12[2],
	.param .align 2 .b8 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_13[2],
	.param .align 4 .b8 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_14[4],
	.param .align 16 .b8 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_15[16],
	.param .align 4 .b8 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_16[12],
	.param .align 16 .b8 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_17[16],
	.param .align 8 .b8 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_18[8],
	.param .align 4 .b8 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_19[4],
	.param .align 4 .b8 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_20[12],
	.param .align 8 .b8 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_21[16],
	.param .u64 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_22,
	.param .u64 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_23,
	.param .align 16 .b8 _Z1kfdijlxstcahb6__half13__nv_bfloat167__half26float46float37double24int25char44dim36ParamsPKfPfn_param_24[16]
)
{
	ret;
}
.weak .entry _Z1tIfEvT_PKS0_(
	.param .f32 _Z1tIfEvT_PKS0__param_0,
	.param .u64 _Z1tIfEvT_PKS0__param_1
)
{
	ret;
}
.visible .entry ck(
	.param .u64 ck_param_0,
	.param .u32 ck_param_1
)
{
	ret;
}
";

    #[test]
    fn nvrtc_ptx_agrees_with_the_demangled_types() {
        let entries = read_entries(NVRTC_13).unwrap();
        assert_eq!(entries.len(), 3);
        for entry in &entries[..2] {
            let sig = super::super::demangle(&entry.name).unwrap();
            assert_eq!(sig.params.len(), entry.params.len(), "{}", entry.name);
            for (param, ty) in entry.params.iter().zip(&sig.params) {
                let want = if matches!(ty, CType::Named(_)) {
                    PtxCheck::Unchecked
                } else {
                    PtxCheck::Matches
                };
                assert_eq!(
                    param.check(ty),
                    want,
                    "{}: {param} against {ty}",
                    param.name
                );
            }
        }
        assert_eq!(entries[0].params.len(), 25);
        assert_eq!(entries[2].name, "ck");
        let declared = parse_declared("float*, int").unwrap();
        for (param, ty) in entries[2].params.iter().zip(&declared) {
            assert_eq!(param.check(ty), PtxCheck::Matches);
        }
        // The mismatches PTX can see: float for int, and widths.
        let k = &entries[0].params;
        assert!(matches!(k[0].check(&CType::Int), PtxCheck::Mismatch(_)));
        assert!(matches!(k[2].check(&CType::Float), PtxCheck::Mismatch(_)));
        assert!(matches!(k[1].check(&CType::Float), PtxCheck::Mismatch(_)));
        assert!(matches!(k[5].check(&CType::Int), PtxCheck::Mismatch(_)));
        assert!(matches!(
            k[15].check(&CType::from_global_name("float3")),
            PtxCheck::Mismatch(_)
        ));
        assert!(matches!(k[12].check(&CType::Short), PtxCheck::Matches));
    }
}
