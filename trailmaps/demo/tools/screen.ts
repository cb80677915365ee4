// Helpers shared by the demo's tools: reading what `snapshot` returns, and selectors by resource id.
import type { TrailblazeNodeSelector } from "@trailblaze/scripting";

/** One node of the snapshot's tree. */
export interface SnapNode {
  /** The node's ref, for `tap` and `type`. */
  ref: string;
  className: string;
  text?: string | null;
  hintText?: string | null;
  resourceId?: string | null;
  checked?: boolean | null;
  children: SnapNode[];
}

/** What the `snapshot` tool returns. */
export interface Snapshot {
  appId?: string | null;
  /** The compact text the LLM reads. */
  text: string;
  root: SnapNode;
}

/** Every node of the tree, depth first. */
export function allNodes(node: SnapNode): SnapNode[] {
  const out: SnapNode[] = [node];
  for (const child of node.children) out.push(...allNodes(child));
  return out;
}

/** A selector for the demo app's node with resource id `id` (ids read `com.example.demo:id/<id>`). */
export function byId(id: string): TrailblazeNodeSelector {
  return { androidAccessibility: { resourceIdRegex: `.*:id/${id}` } };
}
