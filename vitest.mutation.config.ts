import { defineConfig } from 'vitest/config';

// The tests StrykerJS runs against each mutant (`npm run test:mutation`, stryker.config.mjs): the
// unit project of vitest.config.ts (no external service), minus the tests of the built package
// (dist/ is not rebuilt per mutant, so they cannot see a mutant of src/ and only cost time).
export default defineConfig({
  test: {
    environment: 'node',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          exclude: [
            'test/unit/dist.test.ts',
            
            'test/unit/readme-fake-timers-example.test.ts',
          ],
        },
      },
    ],
  },
});
