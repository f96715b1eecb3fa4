import './base.css';
import './celldiff.css';
