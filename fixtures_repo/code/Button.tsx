import React from 'react';

interface ButtonProps {
  label: string;
}

// A button.
export const Button = ({ label }: ButtonProps) => {
  const handle = () => console.log(label);
  return <button onClick={handle}>{label}</button>;
};

export default function App() {
  return <Button label="hi" />;
}

class Legacy extends React.Component<ButtonProps> {
  render() {
    return <div>{this.props.label}</div>;
  }
}
