import { defineConfig } from 'vitest/config';

// Unit tests cover the pure rendering models (src/model/*): no DOM, no JupyterLab.
export default defineConfig({
  test: {
    include: ['src/__tests__/**/*.spec.ts'],
    environment: 'node'
  }
});
