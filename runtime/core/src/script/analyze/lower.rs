//! Lowering TypeScript types to JSON Schema (draft 2020-12, the dialect schemars emits, so
//! scripted and built-in tools' schemas read alike).
//!
//! | TypeScript | JSON Schema |
//! | --- | --- |
//! | `string`, `number`, `boolean` | `{"type": "string"}`, `{"type": "number"}` (TS has no integer type), `{"type": "boolean"}` |
//! | literal types, unions of them, `enum`s with literal members, `E.A` | `{"type": "string", "enum": [...]}`: one literal is a one-value `enum`, never `const`; mixed kinds give a `type` list |
//! | `T[]`, `Array<T>`, `ReadonlyArray<T>`, `readonly T[]` | `{"type": "array", "items": T}` |
//! | `[A, B]` | `{"type": "array", "prefixItems": [A, B], "minItems": 2, "maxItems": 2}` |
//! | object literal types, interfaces (`extends` merged), intersections of them | `{"type": "object", "properties", "required", "additionalProperties": false}`, properties in declaration order |
//! | `x?: T`, `x: T \| undefined` | `x` left out of `required` |
//! | `Record<string, T>`, `{ [k: string]: T }` | `{"type": "object", "additionalProperties": T}` |
//! | `Record<"a" \| "b", T>`, `Partial`, `Required`, `Readonly`, `Pick`, `Omit`, `NonNullable` | applied to the lowered schema |
//! | `T \| null` | `"type": [T, "null"]` (and `null` added to an `enum`); `{"anyOf": [T, {"type": "null"}]}` when `T` is a `$ref` or a union (schemars' rule) |
//! | unions of primitives (`string \| number`) | `{"type": ["string", "number"]}` |
//! | other unions | `{"anyOf": [...]}`; never at the input's root, which must be an object |
//! | `undefined`, `void` other than as a property | `{"type": "null"}`: JSON has no undefined, `JSON.stringify` turns it into `null` (or drops the key) |
//! | `unknown`, `any` | `{}` |
//! | `object` | `{"type": "object"}` |
//! | `TrailblazeNodeSelector` (from the SDK) | `{"$ref": "#/$defs/TrailblazeNodeSelector"}`, never inlined |
//! | `Promise<T>` as a tool's whole output | `T` |
//!
//! TSDoc comments on properties, interfaces and aliases become `description` (a property's own
//! wins over its type's). Named types are inlined (no `$defs`), so a recursive type is an error.
//! Everything else is an error naming the type: a generic parameter with no argument, function,
//! class and built-in object types (`Date`...), conditional and mapped types, `keyof`, `typeof`,
//! indexed access, template literal types, `bigint`, `symbol`, `never`.

use std::{
    collections::{HashMap, HashSet},
    fmt,
    rc::Rc,
};

use serde_json::{Value, json};
use swc_core::{
    common::{Span, Spanned},
    ecma::ast::{
        Expr, Lit, MemberProp, TsEntityName, TsEnumDecl, TsEnumMemberId, TsFnParam, TsIntersectionType, TsKeywordType,
        TsKeywordTypeKind, TsLit, TsLitType, TsTupleType, TsType, TsTypeElement, TsTypeOperatorOp, TsTypeParamDecl,
        TsTypeRef, TsUnionOrIntersectionType, TsUnionType, UnaryOp,
    },
};

mod composite;
mod refs;

use super::lowered_schema::{
    Additional, Keys, Prims, Shape, allow_null, describe, is_any, is_null, json_type, keys_of, merge_members, number,
    push_unique, strip_null,
};
use super::{
    AnalyzeError, Analyzer, Export, Import, Imported, ModuleInfo, SDK_MODULE, SELECTOR_REF, TypeDecl, TypeDeclKind,
    unwrap_expr,
};

/// Deepest nesting of types followed (properties, arrays, aliases...). Real tool types nest
/// a handful of levels; the guard keeps our own recursion far from the stack's end.
const MAX_DEPTH: usize = 64;

/// Most types lowered for one tool type: inlining named types can blow up exponentially
/// (`type B = { a: A; b: A }`, `type C = { a: B; b: B }`...).
const MAX_STEPS: usize = 20_000;

/// Built-in object types named in errors as such rather than as unknown names.
const OBJECT_TYPES: &[&str] = &[
    "Date",
    "RegExp",
    "Map",
    "Set",
    "WeakMap",
    "WeakSet",
    "Error",
    "Function",
    "Object",
    "String",
    "Number",
    "Boolean",
    "Symbol",
    "BigInt",
    "ArrayBuffer",
    "Uint8Array",
    "Blob",
    "URL",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Input,
    Output,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Input => "input",
            Role::Output => "output",
        })
    }
}

pub(super) enum Fail {
    /// A type we cannot lower: the caller adds the tool and the way out.
    Type { span: Span, what: String },
    /// An imported module does not parse: reported as is.
    Fatal(AnalyzeError),
}

type R<T> = Result<T, Fail>;

/// A lowered type. `undefined` is kept apart because it means "optional" on a property and
/// `null` anywhere else.
#[derive(Debug, Clone)]
struct Lowered {
    schema: Value,
    undefined: bool,
}

impl Lowered {
    fn plain(schema: Value) -> Self {
        Self {
            schema,
            undefined: false,
        }
    }

    /// The schema where `undefined` cannot mean "absent".
    fn value(self) -> Value {
        if self.undefined {
            allow_null(self.schema)
        } else {
            self.schema
        }
    }
}

/// A generic declaration's parameters while its body is lowered.
enum Binding {
    Bound(Lowered),
    Unbound,
}

type Env = HashMap<String, Binding>;

/// A name as written: `X` or `ns.X`.
#[derive(Clone, Copy)]
enum Path<'x> {
    Name(&'x str),
    Member(&'x str, &'x str),
}

/// What an imported name turned out to be.
enum Target {
    Sdk(String),
    Decl(Rc<ModuleInfo>, String),
}

/// Lowers a tool's `I` (which must be an object) or `O`, written in module `m`.
pub(super) fn lower_root(an: &mut Analyzer<'_>, m: &Rc<ModuleInfo>, ty: &TsType, role: Role) -> R<Value> {
    let mut lowering = Lowering {
        an,
        depth: 0,
        steps: 0,
        expanding: Vec::new(),
    };
    let env = Env::new();
    match role {
        Role::Input => {
            let schema = lowering.lower(m, &env, ty)?.value();
            if schema.get("type").and_then(Value::as_str) == Some("object") {
                Ok(schema)
            } else {
                Err(lowering.unsupported(ty.span(), "is not an object type, and a tool's arguments are an object"))
            }
        }
        Role::Output => {
            let ty = promised(ty).unwrap_or(ty);
            Ok(lowering.lower(m, &env, ty)?.value())
        }
    }
}

/// `T` of `Promise<T>`: a handler may be async, and its result is what the caller sees.
fn promised(ty: &TsType) -> Option<&TsType> {
    match ty {
        TsType::TsParenthesizedType(p) => promised(&p.type_ann),
        TsType::TsTypeRef(r) => match (&r.type_name, r.type_params.as_deref()) {
            (TsEntityName::Ident(id), Some(args)) if &*id.sym == "Promise" => match &args.params[..] {
                [one] => Some(&**one),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

struct Lowering<'a, 'l> {
    an: &'a mut Analyzer<'l>,
    depth: usize,
    steps: usize,
    /// Named types being expanded, by (module, name): meeting one again is recursion.
    expanding: Vec<(usize, String)>,
}

impl Lowering<'_, '_> {
    fn fail(&self, span: Span, what: impl Into<String>) -> Fail {
        Fail::Type {
            span,
            what: what.into(),
        }
    }

    /// "`<the type as written>` <why>".
    fn unsupported(&self, span: Span, why: &str) -> Fail {
        self.fail(span, format!("`{}` {why}", self.an.snippet(span)))
    }

    fn lower(&mut self, m: &Rc<ModuleInfo>, env: &Env, ty: &TsType) -> R<Lowered> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(self.fail(ty.span(), format!("the type expands to more than {MAX_STEPS} schemas")));
        }
        if self.depth >= MAX_DEPTH {
            return Err(self.fail(ty.span(), format!("the type nests deeper than {MAX_DEPTH} levels")));
        }
        self.depth += 1;
        let lowered = self.lower_inner(m, env, ty);
        self.depth -= 1;
        lowered
    }

    fn lower_inner(&mut self, m: &Rc<ModuleInfo>, env: &Env, ty: &TsType) -> R<Lowered> {
        let schema = match ty {
            TsType::TsKeywordType(k) => return self.keyword(k),
            TsType::TsLitType(lit) => self.literal(lit)?,
            TsType::TsParenthesizedType(p) => return self.lower(m, env, &p.type_ann),
            TsType::TsTypeOperator(op) => match op.op {
                TsTypeOperatorOp::ReadOnly => return self.lower(m, env, &op.type_ann),
                TsTypeOperatorOp::KeyOf => {
                    return Err(self.unsupported(op.span, "uses `keyof`"));
                }
                TsTypeOperatorOp::Unique => {
                    return Err(self.unsupported(op.span, "has no JSON representation"));
                }
            },
            TsType::TsArrayType(a) => {
                json!({"type": "array", "items": self.lower(m, env, &a.elem_type)?.value()})
            }
            TsType::TsTupleType(t) => self.tuple(m, env, t)?,
            TsType::TsTypeLit(lit) => {
                let mut shape = Shape::declared();
                self.members(m, env, &lit.members, &mut shape)?;
                shape.into_value()
            }
            TsType::TsUnionOrIntersectionType(TsUnionOrIntersectionType::TsUnionType(u)) => {
                return self.union(m, env, u);
            }
            TsType::TsUnionOrIntersectionType(TsUnionOrIntersectionType::TsIntersectionType(i)) => {
                self.intersection(m, env, i)?
            }
            TsType::TsTypeRef(r) => return self.type_ref(m, env, r),
            _ => return Err(self.refused(ty)),
        };
        Ok(Lowered::plain(schema))
    }

    /// A keyword type (`string`, `undefined`, `never`...).
    fn keyword(&self, k: &TsKeywordType) -> R<Lowered> {
        use TsKeywordTypeKind::*;
        let schema = match k.kind {
            TsAnyKeyword | TsUnknownKeyword => json!({}),
            TsNumberKeyword => json!({"type": "number"}),
            TsStringKeyword => json!({"type": "string"}),
            TsBooleanKeyword => json!({"type": "boolean"}),
            TsObjectKeyword => json!({"type": "object"}),
            TsNullKeyword => json!({"type": "null"}),
            TsUndefinedKeyword | TsVoidKeyword => {
                return Ok(Lowered {
                    schema: json!({"type": "null"}),
                    undefined: true,
                });
            }
            TsBigIntKeyword | TsSymbolKeyword => {
                return Err(self.unsupported(k.span, "has no JSON representation"));
            }
            TsNeverKeyword | TsIntrinsicKeyword => {
                return Err(self.unsupported(k.span, "has no values to describe"));
            }
        };
        Ok(Lowered::plain(schema))
    }

    /// A literal type: a one-value `enum`.
    fn literal(&self, lit: &TsLitType) -> R<Value> {
        Ok(match &lit.lit {
            TsLit::Str(s) => json!({"type": "string", "enum": [s.value.to_string_lossy()]}),
            TsLit::Bool(b) => json!({"type": "boolean", "enum": [b.value]}),
            TsLit::Number(n) => match number(n.value) {
                Some(v) => json!({"type": "number", "enum": [v]}),
                None => return Err(self.unsupported(lit.span, "is not a finite number")),
            },
            TsLit::Tpl(t) if t.types.is_empty() => {
                let text: String = t
                    .quasis
                    .iter()
                    .filter_map(|q| q.cooked.as_ref())
                    .map(|c| c.to_string_lossy().into_owned())
                    .collect();
                json!({"type": "string", "enum": [text]})
            }
            TsLit::Tpl(_) => {
                return Err(self.unsupported(lit.span, "is a template literal type"));
            }
            TsLit::BigInt(_) => {
                return Err(self.unsupported(lit.span, "has no JSON representation"));
            }
        })
    }

    /// `[A, B]`: a fixed-length array.
    fn tuple(&mut self, m: &Rc<ModuleInfo>, env: &Env, t: &TsTupleType) -> R<Value> {
        let mut items = Vec::new();
        for element in &t.elem_types {
            if matches!(&*element.ty, TsType::TsOptionalType(_) | TsType::TsRestType(_)) {
                return Err(self.unsupported(element.span, "is an optional or rest tuple element"));
            }
            items.push(self.lower(m, env, &element.ty)?.value());
        }
        let n = items.len();
        Ok(json!({"type": "array", "prefixItems": items, "minItems": n, "maxItems": n}))
    }

    /// A reference to a named type (`X`, `ns.X`, `X<A>`).
    fn type_ref(&mut self, m: &Rc<ModuleInfo>, env: &Env, r: &TsTypeRef) -> R<Lowered> {
        let path = match &r.type_name {
            TsEntityName::Ident(id) => Path::Name(&id.sym),
            TsEntityName::TsQualifiedName(q) => match &q.left {
                TsEntityName::Ident(left) => Path::Member(&left.sym, &q.right.sym),
                TsEntityName::TsQualifiedName(_) => {
                    return Err(self.unsupported(r.span, "is a nested qualified name"));
                }
            },
        };
        let args = r.type_params.as_deref().map_or(&[][..], |p| &p.params[..]);
        self.reference(m, env, path, args, r.span)
    }

    /// The error for a kind of type that has no JSON Schema.
    fn refused(&self, ty: &TsType) -> Fail {
        let why = match ty {
            TsType::TsFnOrConstructorType(_) => "is a function type, not a JSON value",
            TsType::TsConditionalType(_) => "is a conditional type",
            TsType::TsMappedType(_) => "is a mapped type",
            TsType::TsTypeQuery(_) => "uses `typeof`",
            TsType::TsIndexedAccessType(_) => "is an indexed access type",
            TsType::TsImportType(_) => "is an `import()` type; import the type by name instead",
            _ => "cannot be lowered to JSON Schema",
        };
        self.unsupported(ty.span(), why)
    }

    /// Adds an object type's members to `shape` (later ones override, as in an interface
    /// that redeclares an inherited property).
    fn members(&mut self, m: &Rc<ModuleInfo>, env: &Env, members: &[TsTypeElement], shape: &mut Shape) -> R<()> {
        for member in members {
            match member {
                TsTypeElement::TsPropertySignature(p) => {
                    let Some(name) = prop_key(&p.key).filter(|_| !p.computed) else {
                        return Err(self.unsupported(p.key.span(), "is a computed property key"));
                    };
                    let (mut schema, undefined) = match &p.type_ann {
                        Some(ann) => {
                            let lowered = self.lower(m, env, &ann.type_ann)?;
                            (lowered.schema, lowered.undefined)
                        }
                        None => (json!({}), false),
                    };
                    if let Some(doc) = self.an.doc_at(p.span.lo) {
                        describe(&mut schema, doc, true);
                    }
                    shape.set(name, schema, !p.optional && !undefined);
                }
                TsTypeElement::TsIndexSignature(ix) => {
                    let string_keys = match ix.params.first() {
                        Some(TsFnParam::Ident(key)) => key.type_ann.as_ref().is_some_and(|a| {
                            matches!(&*a.type_ann, TsType::TsKeywordType(k)
                                if k.kind == TsKeywordTypeKind::TsStringKeyword)
                        }),
                        _ => false,
                    };
                    if !string_keys {
                        return Err(self.unsupported(ix.span, "is an index signature whose keys are not `string`"));
                    }
                    shape.additional = match &ix.type_ann {
                        Some(ann) if is_never(&ann.type_ann) => Additional::Closed,
                        Some(ann) => Additional::Schema(self.lower(m, env, &ann.type_ann)?.value()),
                        None => Additional::Schema(json!({})),
                    };
                }
                TsTypeElement::TsMethodSignature(method) => {
                    return Err(self.unsupported(method.span, "is a method, not a JSON value"));
                }
                other => {
                    return Err(self.unsupported(
                        other.span(),
                        "is a call signature, constructor or accessor, not a JSON value",
                    ));
                }
            }
        }
        Ok(())
    }
}

fn is_never(ty: &TsType) -> bool {
    matches!(ty, TsType::TsKeywordType(k) if k.kind == TsKeywordTypeKind::TsNeverKeyword)
}

fn flatten_union<'t>(types: &'t [Box<TsType>], out: &mut Vec<&'t TsType>) {
    for ty in types {
        let mut ty: &TsType = ty;
        while let TsType::TsParenthesizedType(p) = ty {
            ty = &p.type_ann;
        }
        match ty {
            TsType::TsUnionOrIntersectionType(TsUnionOrIntersectionType::TsUnionType(u)) => {
                flatten_union(&u.types, out);
            }
            _ => out.push(ty),
        }
    }
}

fn prop_key(key: &Expr) -> Option<String> {
    match key {
        Expr::Ident(id) => Some(id.sym.to_string()),
        Expr::Lit(Lit::Str(s)) => Some(s.value.to_string_lossy().into_owned()),
        Expr::Lit(Lit::Num(n)) => number(n.value).map(|v| v.to_string()),
        _ => None,
    }
}
