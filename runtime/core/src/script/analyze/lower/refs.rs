//! Named types: references, imported and re-exported names, aliases and their generic
//! arguments, interfaces (with `extends`), and the SDK's types.

use super::*;

impl Lowering<'_, '_> {
    pub(super) fn reference(
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
        if name == crate::script::analyze::SELECTOR_TYPE {
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
        if name == crate::script::analyze::SELECTOR_TYPE {
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
                if name == crate::script::analyze::SELECTOR_TYPE {
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
}
