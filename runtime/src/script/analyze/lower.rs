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
        Expr, Lit, MemberProp, TsEntityName, TsEnumDecl, TsEnumMemberId, TsFnParam, TsIntersectionType,
        TsKeywordTypeKind, TsLit, TsType, TsTypeElement, TsTypeOperatorOp, TsTypeParamDecl, TsUnionOrIntersectionType,
        TsUnionType, UnaryOp,
    },
};

use super::schema::{
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
            TsType::TsKeywordType(k) => {
                use TsKeywordTypeKind::*;
                match k.kind {
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
                }
            }
            TsType::TsLitType(lit) => match &lit.lit {
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
            },
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
            TsType::TsTupleType(t) => {
                let mut items = Vec::new();
                for element in &t.elem_types {
                    if matches!(&*element.ty, TsType::TsOptionalType(_) | TsType::TsRestType(_)) {
                        return Err(self.unsupported(element.span, "is an optional or rest tuple element"));
                    }
                    items.push(self.lower(m, env, &element.ty)?.value());
                }
                let n = items.len();
                json!({"type": "array", "prefixItems": items, "minItems": n, "maxItems": n})
            }
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
            TsType::TsTypeRef(r) => {
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
                return self.reference(m, env, path, args, r.span);
            }
            TsType::TsFnOrConstructorType(_) => {
                return Err(self.unsupported(ty.span(), "is a function type, not a JSON value"));
            }
            TsType::TsConditionalType(_) => {
                return Err(self.unsupported(ty.span(), "is a conditional type"));
            }
            TsType::TsMappedType(_) => return Err(self.unsupported(ty.span(), "is a mapped type")),
            TsType::TsTypeQuery(_) => return Err(self.unsupported(ty.span(), "uses `typeof`")),
            TsType::TsIndexedAccessType(_) => {
                return Err(self.unsupported(ty.span(), "is an indexed access type"));
            }
            TsType::TsImportType(_) => {
                return Err(self.unsupported(ty.span(), "is an `import()` type; import the type by name instead"));
            }
            _ => return Err(self.unsupported(ty.span(), "cannot be lowered to JSON Schema")),
        };
        Ok(Lowered::plain(schema))
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

    fn union(&mut self, m: &Rc<ModuleInfo>, env: &Env, u: &TsUnionType) -> R<Lowered> {
        let mut flat = Vec::new();
        flatten_union(&u.types, &mut flat);
        let (mut null, mut undefined, mut any) = (false, false, false);
        let mut members: Vec<Value> = Vec::new();
        for ty in flat {
            if let TsType::TsKeywordType(k) = ty {
                match k.kind {
                    TsKeywordTypeKind::TsNullKeyword => {
                        null = true;
                        continue;
                    }
                    TsKeywordTypeKind::TsUndefinedKeyword | TsKeywordTypeKind::TsVoidKeyword => {
                        undefined = true;
                        continue;
                    }
                    TsKeywordTypeKind::TsNeverKeyword => continue,
                    _ => {}
                }
            }
            let lowered = self.lower(m, env, ty)?;
            undefined |= lowered.undefined;
            let mut schema = lowered.schema;
            any |= is_any(&schema);
            null |= strip_null(&mut schema);
            if is_null(&schema) {
                continue;
            }
            // A member that is itself a union contributes its members.
            match schema {
                Value::Object(mut o) if o.len() == 1 && o.contains_key("anyOf") => {
                    if let Some(Value::Array(inner)) = o.remove("anyOf") {
                        for s in inner {
                            push_unique(&mut members, s);
                        }
                    }
                }
                schema => push_unique(&mut members, schema),
            }
        }
        let schema = if any {
            json!({})
        } else {
            match members.len() {
                0 => json!({"type": "null"}),
                1 => members.pop().unwrap_or_default(),
                _ => merge_members(members),
            }
        };
        let schema = if null { allow_null(schema) } else { schema };
        Ok(Lowered { schema, undefined })
    }

    fn intersection(&mut self, m: &Rc<ModuleInfo>, env: &Env, it: &TsIntersectionType) -> R<Value> {
        // `T & {}` is `T` without null and undefined, the idiom behind `"a" | (string & {})`.
        let empty = |t: &&TsType| matches!(t, TsType::TsTypeLit(lit) if lit.members.is_empty());
        let kept: Vec<&TsType> = it.types.iter().map(|t| &**t).filter(|t| !empty(t)).collect();
        match kept[..] {
            [] => return Ok(Shape::declared().into_value()),
            [only] if it.types.len() > 1 => {
                let mut schema = self.lower(m, env, only)?.schema;
                strip_null(&mut schema);
                return Ok(schema);
            }
            _ => {}
        }
        let mut merged: Option<Shape> = None;
        for ty in kept {
            let schema = self.lower(m, env, ty)?.value();
            if is_any(&schema) {
                continue; // `T & unknown` is `T`
            }
            let Some(mut shape) = Shape::from_value(&schema) else {
                return Err(self.unsupported(
                    it.span,
                    &format!(
                        "cannot be merged into one object: `{}` is not an object type",
                        self.an.snippet(ty.span())
                    ),
                ));
            };
            shape.description = None;
            match &mut merged {
                None => merged = Some(shape),
                Some(acc) => {
                    if let Err(why) = acc.merge(shape, true) {
                        return Err(self.unsupported(it.span, &format!("cannot be merged into one object: {why}")));
                    }
                }
            }
        }
        Ok(merged.map_or_else(|| json!({}), Shape::into_value))
    }

    fn reference(
        &mut self,
        m: &Rc<ModuleInfo>,
        env: &Env,
        path: Path<'_>,
        args: &[Box<TsType>],
        span: Span,
    ) -> R<Lowered> {
        let (left, right) = match path {
            Path::Name(name) => return self.named(m, env, name, args, span),
            Path::Member(left, right) => (left, right),
        };
        // `ns.X` through `import * as ns`.
        if let Some(import) = m.imports.get(left)
            && matches!(import.imported, Imported::Namespace)
        {
            if import.specifier == SDK_MODULE {
                return self.sdk(right, span);
            }
            let module = self.an.load(m, &import.specifier, import.span)?;
            let Some(target) = self.resolve_export(&module, right, &mut HashSet::new())? else {
                return Err(self.fail(span, format!("`{}` has no exported type `{right}`", import.specifier)));
            };
            return self.target(target, args, m, env, span);
        }
        // `E.A`: one member of an enum.
        let target = if m.types.contains_key(left) {
            Some(Target::Decl(m.clone(), left.to_owned()))
        } else if let Some(import) = m.imports.get(left) {
            Some(self.resolve_import(m, import, span, &mut HashSet::new())?)
        } else {
            None
        };
        if let Some(Target::Decl(module, name)) = target
            && let Some(TypeDecl {
                kind: TypeDeclKind::Enum(e),
                ..
            }) = module.types.get(&name).and_then(|d| d.first())
        {
            return Ok(Lowered::plain(self.enum_schema(e, Some(right), span)?));
        }
        Err(self.unsupported(span, "cannot be resolved"))
    }

    fn named(&mut self, m: &Rc<ModuleInfo>, env: &Env, name: &str, args: &[Box<TsType>], span: Span) -> R<Lowered> {
        match env.get(name) {
            Some(Binding::Bound(lowered)) if args.is_empty() => return Ok(lowered.clone()),
            Some(Binding::Bound(_)) => {
                return Err(self.unsupported(span, "applies type arguments to a type parameter"));
            }
            Some(Binding::Unbound) => {
                return Err(self.fail(
                    span,
                    format!("`{name}` is a generic type parameter with no type argument"),
                ));
            }
            None => {}
        }
        if m.types.contains_key(name) {
            return self.expand(m, name, args, m, env, span);
        }
        if let Some(import) = m.imports.get(name) {
            let target = self.resolve_import(m, import, span, &mut HashSet::new())?;
            return self.target(target, args, m, env, span);
        }
        if let Some(lowered) = self.builtin(m, env, name, args, span)? {
            return Ok(lowered);
        }
        if m.classes.contains(name) {
            return Err(self.fail(span, format!("`{name}` is a class or function, not a JSON shape")));
        }
        // Tolerated without its import: it can only mean the SDK's selector.
        if name == "TrailblazeNodeSelector" {
            return self.sdk(name, span);
        }
        if OBJECT_TYPES.contains(&name) {
            return Err(self.fail(span, format!("`{name}` is a built-in object type, not a JSON value")));
        }
        Err(self.fail(span, format!("cannot resolve the type `{name}`")))
    }

    fn target(
        &mut self,
        target: Target,
        args: &[Box<TsType>],
        m: &Rc<ModuleInfo>,
        env: &Env,
        span: Span,
    ) -> R<Lowered> {
        match target {
            Target::Sdk(name) => self.sdk(&name, span),
            Target::Decl(module, name) => self.expand(&module, &name, args, m, env, span),
        }
    }

    fn sdk(&self, name: &str, span: Span) -> R<Lowered> {
        if name == "TrailblazeNodeSelector" {
            Ok(Lowered::plain(json!({"$ref": SELECTOR_REF})))
        } else {
            Err(self.fail(
                span,
                format!(
                    "`{name}` from {SDK_MODULE} cannot be lowered (of the SDK's types, only \
                     `TrailblazeNodeSelector` can)"
                ),
            ))
        }
    }

    fn resolve_import(
        &mut self,
        m: &ModuleInfo,
        import: &Import,
        span: Span,
        visited: &mut HashSet<(usize, String)>,
    ) -> R<Target> {
        let name = match &import.imported {
            Imported::Named(name) => name.as_str(),
            Imported::Default => "default",
            Imported::Namespace => {
                return Err(self.unsupported(span, "names a whole module, not a type"));
            }
        };
        if import.specifier == SDK_MODULE {
            return Ok(Target::Sdk(name.to_owned()));
        }
        let module = self.an.load(m, &import.specifier, import.span)?;
        self.resolve_export(&module, name, visited)?
            .ok_or_else(|| self.fail(span, format!("`{}` has no exported type `{name}`", import.specifier)))
    }

    /// The declaration module `t` exports as `name`, following re-exports.
    fn resolve_export(
        &mut self,
        t: &Rc<ModuleInfo>,
        name: &str,
        visited: &mut HashSet<(usize, String)>,
    ) -> R<Option<Target>> {
        if !visited.insert((t.idx, name.to_owned())) {
            return Ok(None); // an export cycle
        }
        for (exported, export) in &t.exports {
            if exported != name {
                continue;
            }
            match export {
                Export::Local(local) => {
                    if t.types.contains_key(local) {
                        return Ok(Some(Target::Decl(t.clone(), local.clone())));
                    }
                    if let Some(import) = t.imports.get(local) {
                        return self.resolve_import(t, import, import.span, visited).map(Some);
                    }
                }
                Export::From { specifier, orig, span } => {
                    if specifier == SDK_MODULE {
                        return Ok(Some(Target::Sdk(orig.clone())));
                    }
                    let module = self.an.load(t, specifier, *span)?;
                    if let Some(found) = self.resolve_export(&module, orig, visited)? {
                        return Ok(Some(found));
                    }
                }
            }
        }
        // Declared but not exported: tsc would refuse the import; reading it is harmless.
        if t.types.contains_key(name) {
            return Ok(Some(Target::Decl(t.clone(), name.to_owned())));
        }
        for (specifier, span) in &t.star_exports {
            if specifier == SDK_MODULE {
                if name == "TrailblazeNodeSelector" {
                    return Ok(Some(Target::Sdk(name.to_owned())));
                }
                continue;
            }
            let module = self.an.load(t, specifier, *span)?;
            if let Some(found) = self.resolve_export(&module, name, visited)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// Lowers the declaration `name` of module `t`, applying `args` (written in `m`/`env`).
    fn expand(
        &mut self,
        t: &Rc<ModuleInfo>,
        name: &str,
        args: &[Box<TsType>],
        m: &Rc<ModuleInfo>,
        env: &Env,
        span: Span,
    ) -> R<Lowered> {
        let Some((decls, first)) = t.types.get(name).and_then(|d| Some((d, d.first()?))) else {
            return Err(self.fail(span, format!("cannot resolve the type `{name}`")));
        };
        let mut lowered_args = Vec::with_capacity(args.len());
        for arg in args {
            lowered_args.push(self.lower(m, env, arg)?);
        }
        let key = (t.idx, name.to_owned());
        if self.expanding.contains(&key) {
            return Err(self.fail(
                span,
                format!("`{name}` is recursive, and a recursive type cannot be inlined"),
            ));
        }
        self.expanding.push(key);
        let result = match &first.kind {
            TypeDeclKind::Enum(e) if lowered_args.is_empty() => self.enum_schema(e, None, span).map(Lowered::plain),
            TypeDeclKind::Enum(_) => Err(self.unsupported(span, "gives type arguments to an enum")),
            TypeDeclKind::Alias(a) => self
                .bind(t, a.type_params.as_deref(), lowered_args, name, span)
                .and_then(|inner| self.lower(t, &inner, &a.type_ann)),
            TypeDeclKind::Interface(i) => self
                .bind(t, i.type_params.as_deref(), lowered_args, name, span)
                .and_then(|inner| self.interface(t, &inner, decls)),
        };
        self.expanding.pop();
        let mut lowered = result?;
        if let Some(doc) = decls.iter().find_map(|d| d.doc.clone()) {
            describe(&mut lowered.schema, doc, false);
        }
        Ok(lowered)
    }

    /// The environment of a generic declaration's body: each parameter bound to its argument,
    /// else its default, else left unbound (an error only if the body uses it).
    fn bind(
        &mut self,
        t: &Rc<ModuleInfo>,
        params: Option<&TsTypeParamDecl>,
        args: Vec<Lowered>,
        name: &str,
        span: Span,
    ) -> R<Env> {
        let params = params.map_or(&[][..], |p| &p.params[..]);
        if args.len() > params.len() {
            return Err(self.fail(
                span,
                format!("`{name}` takes {} type argument(s), not {}", params.len(), args.len()),
            ));
        }
        let mut env = Env::new();
        let mut args = args.into_iter();
        for param in params {
            let binding = match (args.next(), &param.default) {
                (Some(arg), _) => Binding::Bound(arg),
                (None, Some(default)) => Binding::Bound(self.lower(t, &env, default)?),
                (None, None) => Binding::Unbound,
            };
            env.insert(param.name.sym.to_string(), binding);
        }
        Ok(env)
    }

    /// An interface, all its declarations merged, bases first.
    fn interface(&mut self, t: &Rc<ModuleInfo>, env: &Env, decls: &[TypeDecl]) -> R<Lowered> {
        let mut shape = Shape::declared();
        for decl in decls {
            let TypeDeclKind::Interface(i) = &decl.kind else {
                continue;
            };
            for heritage in &i.extends {
                let path = match unwrap_expr(&heritage.expr) {
                    Expr::Ident(id) => Path::Name(&id.sym),
                    Expr::Member(member) => match (unwrap_expr(&member.obj), &member.prop) {
                        (Expr::Ident(obj), MemberProp::Ident(prop)) => Path::Member(&obj.sym, &prop.sym),
                        _ => return Err(self.unsupported(heritage.span, "is not a type name")),
                    },
                    _ => return Err(self.unsupported(heritage.span, "is not a type name")),
                };
                let args = heritage.type_args.as_deref().map_or(&[][..], |a| &a.params[..]);
                let base = self.reference(t, env, path, args, heritage.span)?.value();
                let Some(mut base) = Shape::from_value(&base) else {
                    return Err(self.unsupported(heritage.span, "is extended but is not an object type"));
                };
                base.description = None;
                // Later bases win, as the interface's own members do below.
                let _ = shape.merge(base, false);
            }
            self.members(t, env, &i.body.body, &mut shape)?;
        }
        Ok(Lowered::plain(shape.into_value()))
    }

    fn builtin(
        &mut self,
        m: &Rc<ModuleInfo>,
        env: &Env,
        name: &str,
        args: &[Box<TsType>],
        span: Span,
    ) -> R<Option<Lowered>> {
        let arity = match name {
            "Array" | "ReadonlyArray" | "Partial" | "Required" | "Readonly" | "NonNullable" | "Promise" => 1,
            "Record" | "Pick" | "Omit" => 2,
            _ => return Ok(None),
        };
        if name == "Promise" {
            return Err(self.unsupported(
                span,
                "is not a JSON value (only a tool's whole output may be a Promise)",
            ));
        }
        let [first, rest @ ..] = args else {
            return Err(self.fail(span, format!("`{name}` takes {arity} type argument(s)")));
        };
        if args.len() != arity {
            return Err(self.fail(span, format!("`{name}` takes {arity} type argument(s)")));
        }
        let lowered = self.lower(m, env, first)?;
        let schema = match name {
            "Readonly" => return Ok(Some(lowered)),
            "NonNullable" => {
                let mut schema = lowered.schema;
                strip_null(&mut schema);
                schema
            }
            "Array" | "ReadonlyArray" => json!({"type": "array", "items": lowered.value()}),
            "Partial" | "Required" => {
                let mut shape = self.shape_of(lowered.value(), first, name)?;
                for prop in &mut shape.props {
                    prop.required = name == "Required";
                }
                shape.into_value()
            }
            "Record" => {
                let value = match rest.first() {
                    // `Record<string, never>`, the usual "no arguments": an empty object.
                    Some(v) if is_never(v) => return Ok(Some(Lowered::plain(Shape::declared().into_value()))),
                    Some(v) => self.lower(m, env, v)?.value(),
                    None => json!({}),
                };
                match keys_of(&lowered.value()) {
                    Some(Keys::AnyString) => json!({"type": "object", "additionalProperties": value}),
                    Some(Keys::Listed(keys)) => {
                        let mut shape = Shape::declared();
                        for key in keys {
                            shape.set(key, value.clone(), true);
                        }
                        shape.into_value()
                    }
                    None => {
                        return Err(self.unsupported(
                            first.span(),
                            "cannot key a `Record`: keys must be `string` or string literals",
                        ));
                    }
                }
            }
            _ => {
                // Pick, Omit
                let mut shape = self.shape_of(lowered.value(), first, name)?;
                let keys = match rest.first() {
                    Some(k) => keys_of(&self.lower(m, env, k)?.value()),
                    None => None,
                };
                let Some(Keys::Listed(keys)) = keys else {
                    return Err(self.unsupported(span, &format!("names keys that are not string literals in `{name}`")));
                };
                let keep = name == "Pick";
                shape.props.retain(|p| keys.contains(&p.name) == keep);
                shape.into_value()
            }
        };
        Ok(Some(Lowered::plain(schema)))
    }

    fn shape_of(&self, schema: Value, ty: &TsType, utility: &str) -> R<Shape> {
        Shape::from_value(&schema).ok_or_else(|| {
            self.unsupported(
                ty.span(),
                &format!("is not an object type, so `{utility}` cannot apply to it"),
            )
        })
    }

    /// An enum's values, or only `member`'s.
    fn enum_schema(&self, e: &TsEnumDecl, member: Option<&str>, span: Span) -> R<Value> {
        let mut next = Some(0.0);
        let mut values = Vec::new();
        for m in &e.members {
            let name = match &m.id {
                TsEnumMemberId::Ident(id) => id.sym.to_string(),
                TsEnumMemberId::Str(s) => s.value.to_string_lossy().into_owned(),
            };
            let value = match m.init.as_deref().map(unwrap_expr) {
                None => next.and_then(number),
                Some(Expr::Lit(Lit::Num(n))) => number(n.value),
                Some(Expr::Unary(u)) if u.op == UnaryOp::Minus => match unwrap_expr(&u.arg) {
                    Expr::Lit(Lit::Num(n)) => number(-n.value),
                    _ => None,
                },
                Some(Expr::Lit(Lit::Str(s))) => Some(Value::from(s.value.to_string_lossy())),
                Some(Expr::Tpl(t)) if t.exprs.is_empty() => Some(Value::from(
                    t.quasis
                        .iter()
                        .filter_map(|q| q.cooked.as_ref())
                        .map(|c| c.to_string_lossy().into_owned())
                        .collect::<String>(),
                )),
                Some(_) => None,
            };
            let Some(value) = value else {
                return Err(self.fail(
                    m.span,
                    format!("the enum member `{}.{name}` has a computed value", e.id.sym),
                ));
            };
            next = value.as_f64().map(|n| n + 1.0);
            if member.is_none_or(|wanted| wanted == name) {
                values.push(value);
            }
        }
        if values.is_empty() {
            return Err(self.unsupported(span, "names no enum member"));
        }
        let mut prims = Prims::default();
        for v in &values {
            prims.add(json_type(v), Some(v.clone()));
        }
        Ok(prims.into_schemas().pop().unwrap_or_default())
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
