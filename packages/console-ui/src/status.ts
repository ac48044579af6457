import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

/** The status line every page reports results and refusals to (role=status, read out by screen readers). */
export type Report = (text: string, kind?: 'ok' | 'error') => void;
export const StatusContext = createContext<Report>(() => {});
export const useReport = (): Report => useContext(StatusContext);
