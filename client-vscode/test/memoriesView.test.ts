import { describe, expect, it } from 'vitest';
import { ThemeIcon, TreeItemCollapsibleState } from 'vscode';
import { buildTree, NO_PROBLEMS } from '../src/features/memoriesModel';
import { MemoriesTreeProvider } from '../src/features/memoriesView';
import type { MemoryData } from '../src/features/memoryData';

const directories = [
  {
    path: '/m',
    uri: 'file:///m',
    list: {
      directory: '/m',
      memories: [{ path: 'a.md', name: 'A', type: 'user', description: 'd', visibility: { inIndex: true, index: 'loaded' as const, indexLines: [0] } }],
    },
  },
];

function fakeData(): MemoryData {
  return {
    current: directories,
    isLoaded: true,
    get: async () => directories,
    onDidChange: () => ({ dispose: () => undefined }),
    problemsFor: () => NO_PROBLEMS,
  } as unknown as MemoryData;
}

describe('MemoriesTreeProvider', () => {
  it('turns nodes into tree items with icons, menus and an open command', () => {
    const provider = new MemoriesTreeProvider(fakeData());
    provider.rebuild();
    const roots = provider.getChildren() as ReturnType<typeof buildTree>;
    expect(roots).toHaveLength(1);
    const dirItem = provider.getTreeItem(roots[0]!);
    expect(dirItem.collapsibleState).toBe(TreeItemCollapsibleState.Expanded);
    expect(dirItem.contextValue).toBe('memdir.directory');

    const userType = roots[0]!.children[0]!;
    expect(provider.getTreeItem(userType).iconPath).toEqual(new ThemeIcon('account'));
    const empty = roots[0]!.children[1]!;
    expect(provider.getTreeItem(empty).collapsibleState).toBe(TreeItemCollapsibleState.None);

    const memory = userType.children[0]!;
    const item = provider.getTreeItem(memory);
    expect(item.label).toBe('A');
    expect(item.contextValue).toBe('memdir.memory.indexed');
    expect(item.command).toMatchObject({ command: 'memdir.memories.open', arguments: [memory] });
    expect(item.resourceUri?.fsPath).toBe('/m/a.md');
    expect(provider.getParent(memory)).toBe(userType);
    expect(provider.getParent(userType)).toBe(roots[0]);
  });
});
