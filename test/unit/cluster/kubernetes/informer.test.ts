import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { Informer, type Watcher } from '../../../../src/cluster/kubernetes/informer.ts';

/** A watcher the test drives: each watch() call is kept, with its query and its callbacks. */
function fakeWatcher() {
  const watches: {
    query: Record<string, unknown>;
    event: (type: string, o: unknown) => void;
    done: (e: unknown) => void;
  }[] = [];
  const watcher: Watcher = {
    async watch(_path, query, event, done) {
      watches.push({ query, event, done });
      return { abort() {} };
    },
  };
  return { watcher, watches };
}

const node = (name: string, resourceVersion: string): V1Node => ({ metadata: { name, resourceVersion } });
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('the informer', () => {
  it('lists, watches from the list with bookmarks, follows events, and relists on 410 Gone', async () => {
    const { watcher, watches } = fakeWatcher();
    let version = 10;
    const lists: string[][] = [['a'], ['a', 'b']];
    const informer = new Informer<V1Node>(
      'nodes',
      '/api/v1/nodes',
      async () => ({
        items: (lists.shift() ?? []).map((name) => node(name, String(version))),
        metadata: { resourceVersion: String(version) },
      }),
      watcher,
      () => {},
      { warn() {} },
    );
    await informer.start();
    await tick();
    assert.deepEqual(watches[0].query, {
      resourceVersion: '10',
      allowWatchBookmarks: true,
      timeoutSeconds: 240,
    });
    watches[0].event('ADDED', node('c', '11'));
    watches[0].event('BOOKMARK', node('', '15'));
    assert.deepEqual(
      informer
        .current()
        .map((n) => n.metadata?.name)
        .sort(),
      ['a', 'c'],
    );
    // The server ends the watch: it is opened again from the bookmark.
    watches[0].done(null);
    await tick();
    assert.equal(watches[1].query.resourceVersion, '15');
    watches[1].event('DELETED', node('c', '16'));
    assert.deepEqual(
      informer.current().map((n) => n.metadata?.name),
      ['a'],
    );
    // 410 Gone: the version was compacted; a new list replaces the copy.
    version = 20;
    watches[1].event('ERROR', { code: 410 });
    watches[1].done(null);
    await tick();
    assert.equal(informer.lists, 2);
    assert.deepEqual(
      informer
        .current()
        .map((n) => n.metadata?.name)
        .sort(),
      ['a', 'b'],
    );
    assert.equal(watches[2].query.resourceVersion, '20');
    informer.stop();
  });

  it('watches again after a failed watch, from where it was', async () => {
    const { watcher, watches } = fakeWatcher();
    const informer = new Informer<V1Node>(
      'nodes',
      '/api/v1/nodes',
      async () => ({ items: [], metadata: { resourceVersion: '5' } }),
      watcher,
      () => {},
      { warn() {} },
    );
    await informer.start();
    await tick();
    watches[0].done(new Error('connection reset'));
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(watches.length, 2);
    assert.equal(watches[1].query.resourceVersion, '5');
    assert.equal(informer.lists, 1);
    informer.stop();
  });
});
