import { Text, useInput } from 'ink';
import { cleanup, render } from 'ink-testing-library';
import { useEffect, useReducer, useState } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { KEY, press, waitFor } from './ink-wait.js';

afterEach(() => cleanup());

/** A screen that counts the keys it receives; its first frame is drawn before it listens. */
function Counter({ activeAfterMs }: { activeAfterMs?: number }): React.JSX.Element {
  const [seen, add] = useReducer((s: string[], k: string) => [...s, k], []);
  const [active, setActive] = useState(activeAfterMs === undefined);
  useEffect(() => {
    if (activeAfterMs === undefined) return undefined;
    const t = setTimeout(() => setActive(true), activeAfterMs);
    return () => clearTimeout(t);
  }, [activeAfterMs]);
  useInput((input, key) => add(key.escape ? 'esc' : key.downArrow ? 'down' : input), { isActive: active });
  return <Text>{active ? `seen: ${seen.join(',') || 'nothing'}` : 'loading'}</Text>;
}

describe('press (keys to an Ink screen)', () => {
  it('waits for a screen that starts listening late (after loading) instead of typing into the void', async () => {
    const app = render(<Counter activeAfterMs={200} />);
    expect(app.lastFrame()).toContain('loading');
    await press(app.stdin, 'x');
    await waitFor(() => (app.lastFrame() ?? '').includes('seen: x'), app.lastFrame);
  });

  it('delivers keys in order, a lone Esc as Esc (not as Alt with the next key)', async () => {
    const app = render(<Counter />);
    await press(app.stdin, KEY.down, KEY.escape, 'n', KEY.escape);
    await waitFor(() => (app.lastFrame() ?? '').includes('seen: down,esc,n,esc'), app.lastFrame);
  });
});
