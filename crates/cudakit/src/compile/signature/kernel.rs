//! A kernel's signature as a launch checks it: for each parameter its C
//! type where known, its PTX declaration where known, and the
//! [`ParamRule`] computed from them once, when the function is looked up.

use std::fmt;

use super::check::ParamRule;
use super::ptx::{PtxCheck, PtxEntry, PtxParam};
use super::{demangle, CType, Signature};

/// Where a kernel's parameter types come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum SignatureSource {
    /// The Itanium-mangled symbol of a C++ kernel: every parameter's C++
    /// type (a part the demangler cannot read is "unknown", and its PTX
    /// declaration is used where the module's PTX is known).
    Mangled,
    /// A signature the caller declared
    /// ([`Module::function_with_signature`](crate::Module::function_with_signature)),
    /// checked against the PTX where the module's PTX is known.
    Declared,
    /// The module's PTX alone (an `extern "C"` kernel): each parameter's
    /// class and width. Catches a float given for an integer and width
    /// mismatches, not signedness or pointee types.
    Ptx,
    /// Nothing (an `extern "C"` kernel of a CUBIN or fatbin, or of a linked
    /// module): only the count and sizes are checked, where the driver
    /// reports them (`cuFuncGetParamInfo`).
    #[default]
    Unknown,
}

impl fmt::Display for SignatureSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SignatureSource::Mangled => "the mangled name",
            SignatureSource::Declared => "the declared signature",
            SignatureSource::Ptx => "the PTX (classes and widths only)",
            SignatureSource::Unknown => "nothing (sizes only)",
        })
    }
}

/// One parameter as the signature knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamType {
    /// Its C type, where known.
    pub c_type: Option<CType>,
    /// Its PTX declaration, where the module's PTX is known.
    pub ptx: Option<PtxParam>,
}

impl ParamType {
    /// The parameter as an error and the audit table name it:
    /// `const float*`, `.f32 (PTX)`, or `unknown`.
    pub fn describe(&self) -> String {
        match (&self.c_type, &self.ptx) {
            (Some(t), _) if t.is_known() => t.to_string(),
            (_, Some(p)) => format!("{p} (PTX)"),
            _ => "unknown".to_owned(),
        }
    }

    fn rule(&self) -> ParamRule {
        match (&self.c_type, &self.ptx) {
            (Some(t), _) if t.is_known() => ParamRule::from_ctype(t),
            (_, Some(p)) => ParamRule::from_ptx(p),
            _ => ParamRule::Any,
        }
    }
}

/// A kernel's parameter types and the rules a launch checks arguments
/// against, computed once when the function is looked up.
#[derive(Debug, Clone, Default)]
pub struct KernelSignature {
    source: SignatureSource,
    demangled: Option<Signature>,
    params: Vec<ParamType>,
    rules: Box<[ParamRule]>,
}

/// Why a declared signature was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredMismatch(pub String);

impl KernelSignature {
    /// The signature of the kernel `symbol`, from its mangled name, else
    /// its PTX entry `ptx`, else nothing.
    pub fn of_symbol(symbol: &str, ptx: Option<&PtxEntry>) -> KernelSignature {
        if let Ok(sig) = demangle(symbol) {
            let consistent = ptx.map_or(true, |e| e.params.len() == sig.params.len());
            if consistent {
                let params = sig
                    .params
                    .iter()
                    .enumerate()
                    .map(|(i, t)| ParamType {
                        c_type: Some(t.clone()),
                        ptx: ptx.and_then(|e| e.params.get(i).cloned()),
                    })
                    .collect();
                return KernelSignature::new(SignatureSource::Mangled, Some(sig), params);
            }
        }
        match ptx {
            Some(entry) => KernelSignature::new(
                SignatureSource::Ptx,
                None,
                entry
                    .params
                    .iter()
                    .map(|p| ParamType {
                        c_type: None,
                        ptx: Some(p.clone()),
                    })
                    .collect(),
            ),
            None => KernelSignature::default(),
        }
    }

    /// The declared parameter types `declared` for the kernel `symbol`,
    /// checked against its PTX entry and its mangled name where known.
    ///
    /// # Errors
    ///
    /// [`DeclaredMismatch`] saying why when the count differs from the
    /// PTX's or the mangled name's, or a type cannot be the PTX parameter,
    /// or differs from the mangled name's type.
    pub fn declared(
        symbol: &str,
        declared: Vec<CType>,
        ptx: Option<&PtxEntry>,
    ) -> Result<KernelSignature, DeclaredMismatch> {
        if let Some(entry) = ptx {
            if entry.params.len() != declared.len() {
                return Err(DeclaredMismatch(format!(
                    "{} parameter(s) declared, the PTX declares {}",
                    declared.len(),
                    entry.params.len()
                )));
            }
            for (i, (t, p)) in declared.iter().zip(&entry.params).enumerate() {
                if let PtxCheck::Mismatch(why) = p.check(t) {
                    return Err(DeclaredMismatch(format!("parameter {i}: {why}")));
                }
            }
        }
        let demangled = demangle(symbol).ok();
        if let Some(sig) = &demangled {
            if sig.params.len() != declared.len() {
                return Err(DeclaredMismatch(format!(
                    "{} parameter(s) declared, the mangled name {symbol} has {}",
                    declared.len(),
                    sig.params.len()
                )));
            }
            for (i, (d, m)) in declared.iter().zip(&sig.params).enumerate() {
                if m.is_known() && d != m {
                    return Err(DeclaredMismatch(format!(
                        "parameter {i}: declared '{d}', the mangled name says '{m}'"
                    )));
                }
            }
        }
        let params = declared
            .into_iter()
            .enumerate()
            .map(|(i, t)| ParamType {
                c_type: Some(t),
                ptx: ptx.and_then(|e| e.params.get(i).cloned()),
            })
            .collect();
        Ok(KernelSignature::new(
            SignatureSource::Declared,
            demangled,
            params,
        ))
    }

    fn new(
        source: SignatureSource,
        demangled: Option<Signature>,
        params: Vec<ParamType>,
    ) -> KernelSignature {
        let rules = params.iter().map(ParamType::rule).collect();
        KernelSignature {
            source,
            demangled,
            params,
            rules,
        }
    }

    /// Where the types come from.
    pub fn source(&self) -> SignatureSource {
        self.source
    }

    /// Whether any parameter type is known (the source is not
    /// [`SignatureSource::Unknown`]).
    pub fn is_known(&self) -> bool {
        self.source != SignatureSource::Unknown
    }

    /// The demangled signature, for a C++ kernel.
    pub fn demangled(&self) -> Option<&Signature> {
        self.demangled.as_ref()
    }

    /// The parameters; empty when nothing is known.
    pub fn params(&self) -> &[ParamType] {
        &self.params
    }

    /// The rules a launch checks, one per parameter.
    pub fn rules(&self) -> &[ParamRule] {
        &self.rules
    }
}

impl fmt::Display for KernelSignature {
    /// `void ns::k<float>(float*, int)` for a C++ kernel; the parameter
    /// list otherwise (`(.f32 (PTX), .u64 (PTX))`, `(unknown)`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let (Some(sig), SignatureSource::Mangled) = (&self.demangled, self.source) {
            return write!(f, "{sig}");
        }
        if self.source == SignatureSource::Unknown {
            return f.write_str("(parameter types unknown)");
        }
        f.write_str("(")?;
        for (i, p) in self.params.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(&p.describe())?;
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests {
    use super::super::check::ArgType;
    use super::super::parse_declared;
    use super::super::ptx::read_entries;
    use super::*;
    use crate::memory::{ElementType, Scalar};

    const PTX: &str = r#"
.version 8.8
.target sm_90
.address_size 64
.visible .entry _Z5saxpyfPKfPfi(
    .param .f32 _Z5saxpyfPKfPfi_param_0,
    .param .u64 .ptr .global .align 4 _Z5saxpyfPKfPfi_param_1,
    .param .u64 .ptr .global .align 4 _Z5saxpyfPKfPfi_param_2,
    .param .u32 _Z5saxpyfPKfPfi_param_3
)
{
    ret;
}
.visible .entry scale(
    .param .u64 .ptr .global .align 4 scale_param_0,
    .param .f32 scale_param_1,
    .param .u32 scale_param_2
)
{
    ret;
}
"#;

    #[test]
    fn sources_in_order_of_precision() {
        let entries = read_entries(PTX).unwrap();
        let saxpy = KernelSignature::of_symbol("_Z5saxpyfPKfPfi", Some(&entries[0]));
        assert_eq!(saxpy.source(), SignatureSource::Mangled);
        assert_eq!(saxpy.to_string(), "saxpy(float, const float*, float*, int)");
        assert_eq!(saxpy.params()[1].describe(), "const float*");
        let f32v = ArgType::Value(ElementType::Scalar(Scalar::F32));
        let i32v = ArgType::Value(ElementType::Scalar(Scalar::I32));
        let u32v = ArgType::Value(ElementType::Scalar(Scalar::U32));
        assert!(saxpy.rules()[0].accepts(&f32v, 4));
        assert!(!saxpy.rules()[0].accepts(&i32v, 4));
        assert!(!saxpy.rules()[3].accepts(&u32v, 4), "int given u32");

        let scale = KernelSignature::of_symbol("scale", Some(&entries[1]));
        assert_eq!(scale.source(), SignatureSource::Ptx);
        assert_eq!(scale.params()[1].describe(), ".f32 (PTX)");
        assert!(!scale.rules()[1].accepts(&i32v, 4));
        assert!(scale.rules()[2].accepts(&u32v, 4));

        let bare = KernelSignature::of_symbol("scale", None);
        assert_eq!(bare.source(), SignatureSource::Unknown);
        assert!(bare.rules().is_empty());
        let mangled_only = KernelSignature::of_symbol("_Z5saxpyfPKfPfi", None);
        assert_eq!(mangled_only.source(), SignatureSource::Mangled);
        assert!(mangled_only.params()[1].ptx.is_none());
    }

    #[test]
    fn declared_signatures_are_checked_against_ptx_and_the_mangled_name() {
        let entries = read_entries(PTX).unwrap();
        let ok = KernelSignature::declared(
            "scale",
            parse_declared("float* out, float a, int n").unwrap(),
            Some(&entries[1]),
        )
        .unwrap();
        assert_eq!(ok.source(), SignatureSource::Declared);
        assert_eq!(ok.to_string(), "(float*, float, int)");
        let wrong_class = KernelSignature::declared(
            "scale",
            parse_declared("float*, int, int").unwrap(),
            Some(&entries[1]),
        )
        .unwrap_err();
        assert!(wrong_class.0.starts_with("parameter 1:"), "{wrong_class:?}");
        let wrong_count = KernelSignature::declared(
            "scale",
            parse_declared("float*").unwrap(),
            Some(&entries[1]),
        )
        .unwrap_err();
        assert!(
            wrong_count.0.contains("the PTX declares 3"),
            "{wrong_count:?}"
        );
        let contradicts = KernelSignature::declared(
            "_Z5saxpyfPKfPfi",
            parse_declared("float, const float*, float*, unsigned").unwrap(),
            None,
        )
        .unwrap_err();
        assert!(contradicts.0.contains("the mangled name says 'int'"));
        // Without PTX, a declared signature is taken as it is.
        assert!(KernelSignature::declared("k", parse_declared("double*").unwrap(), None).is_ok());
    }
}
