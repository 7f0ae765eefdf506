/**
 * HTML with escaping by default: every interpolated value is text unless it is
 * already `Html`. Invisible and direction-changing characters are never rendered
 * silently: each one becomes a visible marker like ⟨U+200B⟩, so what an approver
 * reads is what runs.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/**
 * Characters that show nothing or change how neighbours display: controls (Cc),
 * formats (Cf: zero-width, bidi controls, tags U+E0000–E007F, BOM), line and paragraph
 * separators, unassigned and private-use code points, spaces other than U+0020,
 * variation selectors and the fillers that render blank (U+034F, Hangul fillers, braille blank).
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}\p{Co}\p{Cn}\u034F\u115F\u1160\u2800\u3164\uFFA0\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/u;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function codePointLabel(char: string): string {
  return `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Escaped text with every invisible character replaced by a highlighted marker (a plain space stays a space). */
export function showText(text: string): string {
  let out = '';
  for (const char of text) {
    if (char !== ' ' && INVISIBLE.test(char)) {
      const label = codePointLabel(char);
      out += `<mark class="cp" title="invisible or direction-changing character ${label}">⟨${label}⟩</mark>`;
    } else {
      out += ESCAPES[char] ?? char;
    }
  }
  return out;
}

/** How many characters `showText` would mark. */
export function countInvisible(text: string): number {
  let n = 0;
  for (const char of text) if (char !== ' ' && INVISIBLE.test(char)) n++;
  return n;
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new Html(out);
}

function render(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return showText(String(value));
}

/** Pretty-printed JSON, marked line by line: newlines of the layout stay, those inside strings are already `\n` escapes. */
export function showJson(value: unknown): Html {
  const text = JSON.stringify(value, null, 2) ?? 'null';
  return new Html(text.split('\n').map(showText).join('\n'));
}
