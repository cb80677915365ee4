//! Finding the tool exports of a module, and reading each one's spec, doc and types.

use std::{collections::HashSet, rc::Rc};

use serde_json::Value;
use swc_core::{
    common::{Span, Spanned},
    ecma::ast::{CallExpr, Callee, Expr, ExprOrSpread, Lit, MemberProp, Pat, Prop, PropName, PropOrSpread, TsType},
};

use super::{
    AnalyzeError, AnalyzeOptions, AnalyzedTool, Analyzer, Export, Imported, ModuleInfo, SDK_MODULE, Spec, ValueDecl,
    lower::{self, Fail, Role},
};

impl Analyzer<'_> {
    pub(super) fn run(
        mut self,
        file: &str,
        source: &str,
        options: &AnalyzeOptions,
    ) -> Result<Vec<AnalyzedTool>, AnalyzeError> {
        let main = self.parse(file.to_owned(), source.to_owned())?;
        let (namespaces, tool_fns) = sdk_bindings(&main);
        let mut seen = HashSet::new();
        let mut tools = Vec::new();
        for (name, export) in &main.exports {
            let Export::Local(local) = export else {
                continue; // a tool re-exported from elsewhere belongs to that module
            };
            let Some(value) = main.values.get(local) else {
                continue;
            };
            let Some(call) = tool_call(&value.init, &namespaces, &tool_fns) else {
                continue;
            };
            if name == "default" || !seen.insert(name.clone()) {
                continue;
            }
            tools.push(self.tool(&main, name, value, call, options)?);
        }
        Ok(tools)
    }

    pub(super) fn tool(
        &mut self,
        main: &Rc<ModuleInfo>,
        name: &str,
        value: &ValueDecl,
        call: &CallExpr,
        options: &AnalyzeOptions,
    ) -> Result<AnalyzedTool, AnalyzeError> {
        let args: Vec<&ExprOrSpread> = call.args.iter().filter(|a| a.spread.is_none()).collect();
        let (spec, handler) = match args.as_slice() {
            [] => (None, None),
            [one] if is_spec(main, &one.expr) => (Some(&*one.expr), None),
            [one] => (None, Some(&*one.expr)),
            [spec, handler, ..] => (Some(&*spec.expr), Some(&*handler.expr)),
        };
        let spec = match spec {
            Some(expr) => self.read_spec(main, name, expr)?,
            None => Spec::default(),
        };
        // Type arguments first; else what the handler's own annotations say, as tsc would infer.
        let type_args: &[Box<TsType>] = call.type_args.as_ref().map_or(&[], |t| &t.params);
        // A handler declared apart (`const handler = async (input: In) => ...`) is read there.
        let handler = handler.map(|h| match unwrap_expr(h) {
            Expr::Ident(id) => main.values.get(&*id.sym).map_or(h, |v| &*v.init),
            _ => h,
        });
        let (handler_in, handler_out) = handler.map_or((None, None), handler_types);
        let input_ty = type_args.first().map(|t| &**t).or(handler_in);
        let output_ty = type_args.get(1).map(|t| &**t).or(handler_out);

        let input_schema = match input_ty {
            Some(_) if options.inputs_declared.iter().any(|n| n == name) => None,
            Some(ty) => Some(self.lower_for(main, name, ty, Role::Input)?),
            None => None,
        };
        let output_schema = match output_ty {
            Some(ty) => Some(self.lower_for(main, name, ty, Role::Output)?),
            None => None,
        };
        Ok(AnalyzedTool {
            name: name.to_owned(),
            description: spec.description.or_else(|| value.doc.clone()),
            surface_to_llm: spec.surface_to_llm,
            is_recordable: spec.is_recordable,
            read_only: spec.read_only,
            supported_platforms: spec.supported_platforms,
            input_schema,
            output_schema,
            line: self.locate(value.span.lo).1,
        })
    }

    pub(super) fn lower_for(
        &mut self,
        main: &Rc<ModuleInfo>,
        tool: &str,
        ty: &TsType,
        role: Role,
    ) -> Result<Value, AnalyzeError> {
        lower::lower_root(self, main, ty, role).map_err(|fail| match fail {
            Fail::Fatal(e) => e,
            Fail::Type { span, what } => {
                let hint = match role {
                    Role::Input => {
                        format!("declare the input schema by hand in `{tool}.tool.yaml` under `inputSchema`")
                    }
                    Role::Output => "use JSON-shaped types for the output, or `unknown`".to_owned(),
                };
                self.error_at(
                    span,
                    format!("tool `{tool}`: cannot lower the {role} type: {what}; {hint}"),
                )
            }
        })
    }

    /// Reads the spec object literal. Flags hidden behind expressions would be silently
    /// dropped (a `surfaceToLlm: false` lost means a tool shown to the LLM), so anything but
    /// literals is an error.
    pub(super) fn read_spec(&self, main: &ModuleInfo, tool: &str, expr: &Expr) -> Result<Spec, AnalyzeError> {
        let expr = unwrap_expr(expr);
        let object = match expr {
            Expr::Object(object) => object,
            Expr::Ident(id) => match main.values.get(&*id.sym).map(|v| unwrap_expr(&v.init)) {
                Some(Expr::Object(object)) => object,
                _ => return Err(self.spec_error(tool, expr.span(), "is not an object literal")),
            },
            _ => return Err(self.spec_error(tool, expr.span(), "is not an object literal")),
        };
        let mut spec = Spec::default();
        for prop in &object.props {
            self.spec_property(tool, prop, &mut spec)?;
        }
        Ok(spec)
    }

    /// One `key: literal` of the spec, into `spec`.
    fn spec_property(&self, tool: &str, prop: &PropOrSpread, spec: &mut Spec) -> Result<(), AnalyzeError> {
        let PropOrSpread::Prop(prop) = prop else {
            return Err(self.spec_error(tool, prop.span(), "uses a spread"));
        };
        let Prop::KeyValue(kv) = &**prop else {
            return Err(self.spec_error(tool, prop.span(), "has a property that is not `key: literal`"));
        };
        let key = match &kv.key {
            PropName::Ident(id) => id.sym.to_string(),
            PropName::Str(s) => s.value.to_string_lossy().into_owned(),
            _ => return Err(self.spec_error(tool, kv.key.span(), "has a computed key")),
        };
        let value = unwrap_expr(&kv.value);
        let flag = |slot: &mut Option<bool>| match value {
            Expr::Lit(Lit::Bool(b)) => {
                *slot = Some(b.value);
                Ok(())
            }
            _ => Err(self.spec_error(
                tool,
                value.span(),
                &format!("sets `{key}` to something other than `true` or `false`"),
            )),
        };
        match key.as_str() {
            "surfaceToLlm" => flag(&mut spec.surface_to_llm)?,
            "isRecordable" => flag(&mut spec.is_recordable)?,
            "readOnly" => flag(&mut spec.read_only)?,
            // The original's registration hints: this host always passes a context and runs
            // every tool on the host, so both are read (literals only) and need nothing more.
            "requiresContext" | "requiresHost" => flag(&mut None)?,
            // The original's trailhead metadata (which waypoint a launch tool reaches): data for
            // its UI; any object literal is accepted and nothing here reads it.
            "trailhead" if matches!(value, Expr::Object(_)) => {}
            "supportedPlatforms" | "supportedDrivers" => {
                let list = self.string_list(tool, &key, value)?;
                if key == "supportedPlatforms" {
                    spec.supported_platforms = Some(list);
                }
            }
            "description" => spec.description = self.spec_description(tool, value)?,
            _ => {
                return Err(self.spec_error(
                    tool,
                    kv.key.span(),
                    &format!(
                        "has the unknown key `{key}` (expected description, surfaceToLlm, \
                         isRecordable, readOnly, supportedPlatforms, supportedDrivers, \
                         requiresContext or requiresHost)"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The spec's `description`: a string literal, trimmed; blank is none.
    fn spec_description(&self, tool: &str, value: &Expr) -> Result<Option<String>, AnalyzeError> {
        let text = match value {
            Expr::Lit(Lit::Str(s)) => s.value.to_string_lossy().into_owned(),
            Expr::Tpl(t) if t.exprs.is_empty() => t
                .quasis
                .iter()
                .filter_map(|q| q.cooked.as_ref())
                .map(|c| c.to_string_lossy().into_owned())
                .collect(),
            _ => {
                return Err(self.spec_error(
                    tool,
                    value.span(),
                    "sets `description` to something other than a string literal",
                ));
            }
        };
        let text = text.trim();
        Ok((!text.is_empty()).then(|| text.to_owned()))
    }

    /// `["android", "web"]`: an array of string literals, as the spec's hints must be.
    fn string_list(&self, tool: &str, key: &str, value: &Expr) -> Result<Vec<String>, AnalyzeError> {
        let not_a_list = || {
            self.spec_error(
                tool,
                value.span(),
                &format!("sets `{key}` to something other than an array of string literals"),
            )
        };
        let Expr::Array(array) = value else {
            return Err(not_a_list());
        };
        array
            .elems
            .iter()
            .map(|e| match e.as_ref().map(|e| unwrap_expr(&e.expr)) {
                Some(Expr::Lit(Lit::Str(s))) => Ok(s.value.to_string_lossy().into_owned()),
                _ => Err(not_a_list()),
            })
            .collect()
    }

    pub(super) fn spec_error(&self, tool: &str, span: Span, what: &str) -> AnalyzeError {
        self.error_at(
            span,
            format!(
                "tool `{tool}`: the spec {what}; the analyzer reads the spec from the source, so \
                 write it as an object literal such as `{{ readOnly: true }}`"
            ),
        )
    }
}

/// Local names bound to the SDK's `trailblaze` object (always including the bare
/// `trailblaze`), and to a named import of `tool`.
fn sdk_bindings(main: &ModuleInfo) -> (HashSet<String>, HashSet<String>) {
    let mut namespaces = HashSet::from(["trailblaze".to_owned()]);
    let mut tool_fns = HashSet::new();
    for (local, import) in &main.imports {
        if import.specifier != SDK_MODULE {
            continue;
        }
        match &import.imported {
            Imported::Named(n) if n == "trailblaze" => {
                namespaces.insert(local.clone());
            }
            Imported::Default => {
                namespaces.insert(local.clone());
            }
            Imported::Named(n) if n == "tool" => {
                tool_fns.insert(local.clone());
            }
            _ => {}
        }
    }
    (namespaces, tool_fns)
}

/// The `trailblaze.tool(...)` / `tool(...)` call `init` is, if it is one.
fn tool_call<'e>(init: &'e Expr, namespaces: &HashSet<String>, tool_fns: &HashSet<String>) -> Option<&'e CallExpr> {
    let Expr::Call(call) = unwrap_expr(init) else {
        return None;
    };
    let Callee::Expr(callee) = &call.callee else {
        return None;
    };
    let is_tool = match unwrap_expr(callee) {
        Expr::Member(member) => {
            matches!(&member.prop, MemberProp::Ident(p) if &*p.sym == "tool")
                && matches!(unwrap_expr(&member.obj), Expr::Ident(o) if namespaces.contains(&*o.sym))
        }
        Expr::Ident(id) => tool_fns.contains(&*id.sym),
        _ => false,
    };
    is_tool.then_some(call)
}

/// Sees through parentheses and type-only wrappers (`as`, `satisfies`, `!`, `as const`).
pub(super) fn unwrap_expr(mut expr: &Expr) -> &Expr {
    loop {
        expr = match expr {
            Expr::Paren(p) => &p.expr,
            Expr::TsAs(a) => &a.expr,
            Expr::TsSatisfies(s) => &s.expr,
            Expr::TsNonNull(n) => &n.expr,
            Expr::TsConstAssertion(c) => &c.expr,
            Expr::TsTypeAssertion(t) => &t.expr,
            _ => return expr,
        };
    }
}

/// Whether a lone argument is the spec (an object literal, maybe through a `const`) rather
/// than the handler.
fn is_spec(main: &ModuleInfo, expr: &Expr) -> bool {
    match unwrap_expr(expr) {
        Expr::Object(_) => true,
        Expr::Ident(id) => main
            .values
            .get(&*id.sym)
            .is_some_and(|v| matches!(unwrap_expr(&v.init), Expr::Object(_))),
        _ => false,
    }
}

/// The annotated type of the handler's first parameter and its annotated return type.
fn handler_types(handler: &Expr) -> (Option<&TsType>, Option<&TsType>) {
    fn param_type(pat: &Pat) -> Option<&TsType> {
        match pat {
            Pat::Ident(b) => b.type_ann.as_ref().map(|a| &*a.type_ann),
            Pat::Object(o) => o.type_ann.as_ref().map(|a| &*a.type_ann),
            Pat::Assign(a) => param_type(&a.left),
            _ => None,
        }
    }
    match unwrap_expr(handler) {
        Expr::Arrow(arrow) => (
            arrow.params.first().and_then(param_type),
            arrow.return_type.as_ref().map(|a| &*a.type_ann),
        ),
        Expr::Fn(f) => (
            f.function.params.first().and_then(|p| param_type(&p.pat)),
            f.function.return_type.as_ref().map(|a| &*a.type_ann),
        ),
        _ => (None, None),
    }
}
