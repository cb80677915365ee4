// Helpers shared by the demo's tools: reading the view tree that `snapshot` returns.

/** One node of the device's view tree, as `snapshot` returns it. */
export interface ViewNode {
  className: string;
  text?: string;
  hintText?: string;
  resourceId?: string;
  contentDescription?: string;
  bounds: { left: number; top: number; right: number; bottom: number };
  checked?: boolean | null;
  children?: ViewNode[];
}

/** The snapshot result: the app in front and its root node. */
export interface ViewTree {
  appId?: string | null;
  root: ViewNode;
}

/** Every node of the tree, depth first. */
export function allNodes(node: ViewNode): ViewNode[] {
  const out: ViewNode[] = [node];
  for (const child of node.children ?? []) out.push(...allNodes(child));
  return out;
}

/** The first node matching `pred`, or an error naming `what`. */
export function find(tree: ViewTree, what: string, pred: (n: ViewNode) => boolean): ViewNode {
  const node = allNodes(tree.root).find(pred);
  if (!node) throw new Error(`no ${what} on screen`);
  return node;
}

/** The centre of a node, where a tap lands. */
export function center(node: ViewNode): { x: number; y: number } {
  const { left, top, right, bottom } = node.bounds;
  return { x: Math.floor((left + right) / 2), y: Math.floor((top + bottom) / 2) };
}

/** Whether a node's resource id is `id` (ids read `<app>:id/<id>`). */
export function hasId(node: ViewNode, id: string): boolean {
  return node.resourceId === id || (node.resourceId ?? "").endsWith(`:id/${id}`);
}
