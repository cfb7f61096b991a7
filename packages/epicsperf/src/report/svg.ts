// Vega-Lite specifications rendered to static SVG by vega in Node at report time, so the HTML
// needs no script and no network to show a chart.
import type { TopLevelSpec } from 'vega-lite';

/** vega and vega-lite are loaded when the first chart is drawn, not when the CLI starts. */
export async function toSvg(spec: TopLevelSpec): Promise<string> {
  const [{ compile }, { parse, View }] = await Promise.all([import('vega-lite'), import('vega')]);
  const view = new View(parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
